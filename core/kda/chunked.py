"""The chunked (WY) form of the KDA recurrence: the fast path, `kda_chunked`.

Within a chunk of C tokens with cumulative base-2 log gates G (non-increasing along the chunk):

    P[j, i]  = <scale q_j * 2^(G_j - G_i), k_i>             i <= j
    A[j, i]  = beta_j <k_j * 2^(G_j - G_i), k_i>             i <  j   (strictly lower)
    T        = (I + A)^-1                                    log-depth, no loop over tokens
    v'       = T (beta v - beta 2^G k S)                     corrected values, S the chunk's start
    o        = (scale q * 2^G) S + P v'
    S'       = Diag(2^G_C) S + (2^(G_C - G) * k)^T v'        a chunk is an affine map of S

Pairwise decays are never formed as 2^G_j * 2^-G_i, which overflows fp32 at lb=-5, C=64. Two ways:
* anchored (the fast path): 16-token sub-chunks anchored at their first token, so a factor is at
  most 2^(15 max|g| log2 e); used only while that stays >= 16 binades inside the dtype's range
  (|g| <= 5.08 in fp32, i.e. the K3 lower-bound gate). Cross sub-chunk pairs go through anchor
  tables 2^(G_a - G_b) <= 1.
* halving (any gate): level h pairs the two halves of every 2h-block through the anchor between
  them, so every exponent is <= 0.
Sequences are cut into segments of SEGMENT_TOKENS tokens, which keeps the working set in cache;
the path is chosen per segment from its gates, so results agree across paths to rounding only.
Precision: exponents are differences of chunk-cumulative gates, which carry ~|G| eps of
rounding; in fp32 that is ~2e-6 relative at lb=-5 and ~1e-4 with gates near -2000 (fla's naive
chunk form behaves the same), while float64 stays within ~1e-13 of the recurrence.
"""

from __future__ import annotations

import math

import torch

from core.errors import ParamError, check_int
from core.kda.validate import check_scale, check_tokens, pad_to_chunks, start_state

LOG2E = 1.0 / math.log(2.0)
SUB_CHUNK = 16
SEGMENT_TOKENS = 1024
HEADROOM_BINADES = 16


def _blocks(M: torch.Tensor, h: int, r: int, c: int) -> torch.Tensor:
    """View [..., C/2h, h, h] of the (r, c) half-blocks of every 2h-block of M [..., C, C]."""
    n = M.shape[-1] // (2 * h)
    grid = M.unflatten(-2, (n, 2, h)).unflatten(-1, (n, 2, h))
    return torch.diagonal(grid[..., :, r, :, :, c, :], dim1=-4, dim2=-2).movedim(-1, -3)


def _diag_blocks(M: torch.Tensor, s: int) -> torch.Tensor:
    """View [..., C/s, s, s] of the diagonal s-blocks of M [..., C, C]."""
    m = M.shape[-1] // s
    grid = M.unflatten(-2, (m, s)).unflatten(-1, (m, s))
    return torch.diagonal(grid, dim1=-4, dim2=-2).movedim(-1, -3)


def _pairwise_anchored(qk: torch.Tensor, G: torch.Tensor, s: int) -> torch.Tensor:
    """PA [N, Z, C, 2, C]: row j of P (from q) and of A before beta (from k).

    qk [N, Z, C, 2, K] (q scaled, k); G [N, Z, C, K] base-2 cumulative gates; s divides C.
    """
    N, Z, C, _, K = qk.shape
    m = C // s
    Gs = G.view(N, Z, m, s, K)
    Er = (Gs - Gs[..., :1, :]).exp2_()  # [N, Z, m, s, K], in (2^-bound, 1]
    kc = qk[..., 1, :].reshape(N, Z, m, s, K) * torch.reciprocal(Er)  # [N, Z, m, s, K]
    rows = (qk.view(N, Z, m, s, 2, K) * Er.unsqueeze(-2)).view(N, Z, m, 2 * s, K)
    G0 = Gs[..., 0, :]  # [N, Z, m, K]
    causal = torch.ones(m, m, dtype=torch.bool, device=G.device).tril().unsqueeze(-1)
    D = (G0.unsqueeze(-2) - G0.unsqueeze(-3)).masked_fill_(~causal, -math.inf).exp2_()  # <= 1
    PA = qk.new_zeros(N, Z, m, 2 * s, C)
    for a in range(m):
        cols = kc[:, :, : a + 1] * D[:, :, a, : a + 1].unsqueeze(-2)  # [N, Z, a+1, s, K]
        cols = cols.view(N, Z, (a + 1) * s, K).transpose(-1, -2)
        PA[:, :, a, :, : (a + 1) * s] = rows[:, :, a] @ cols  # row block a, columns 0..a
    PA = PA.view(N, Z, C, 2, C)
    upper = torch.ones(s, s, dtype=torch.bool, device=G.device).triu()
    _diag_blocks(PA[..., 0, :], s).masked_fill_(upper.triu(1), 0.0)
    _diag_blocks(PA[..., 1, :], s).masked_fill_(upper, 0.0)
    return PA


def _pairwise_halving(qk: torch.Tensor, G: torch.Tensor) -> torch.Tensor:
    """Same contract as _pairwise_anchored, exact for any gates: every exponent is <= 0."""
    N, Z, C, _, K = qk.shape
    PA = qk.new_zeros(N, Z, C, 2, C)
    q, k = qk[..., 0, :], qk[..., 1, :]
    h = 1
    while h < C:
        n = C // (2 * h)
        Gb = G.view(N, Z, n, 2, h, K)
        E = Gb - Gb[..., 1:, :1, :]  # [N, Z, n, 2, h, K], anchor = first token of the 2nd half
        E[..., 0, :, :].neg_()
        E = E.exp2_()
        cols = k.reshape(N, Z, n, 2, h, K)[..., 0, :, :] * E[..., 0, :, :]  # [N, Z, n, h, K]
        rows = qk.view(N, Z, n, 2, h, 2, K)[..., 1, :, :, :] * E[..., 1, :, :].unsqueeze(-2)
        res = (rows.view(N, Z, n, 2 * h, K) @ cols.transpose(-1, -2)).view(N, Z, n, h, 2, h)
        _blocks(PA[..., 0, :], h, 1, 0).copy_(res[..., 0, :])
        _blocks(PA[..., 1, :], h, 1, 0).copy_(res[..., 1, :])
        h *= 2
    PA[..., 0, :].diagonal(dim1=-2, dim2=-1).copy_((q * k).sum(-1))
    return PA


def _unit_lower_inverse(A: torch.Tensor, s: int) -> torch.Tensor:
    """(I + A)^-1 for strictly lower A [..., C, C]: Neumann doubling on s-blocks, then merges.

    (I + X)^-1 = (I - X)(I + X^2)(I + X^4)... is exact for a nilpotent s-block; each merge
    doubles the block: [[T11, 0], [-T22 A21 T11, T22]].
    """
    X = -_diag_blocks(A, s)  # [..., C/s, s, s]
    Td = X + torch.eye(s, dtype=A.dtype, device=A.device)
    for _ in range(s.bit_length() - 2):
        X = X @ X
        Td = Td + Td @ X
    T = torch.zeros_like(A)  # [..., C, C]
    _diag_blocks(T, s).copy_(Td)
    h = s
    while h < A.shape[-1]:
        x = _blocks(A, h, 1, 0) @ _blocks(T, h, 0, 0)
        _blocks(T, h, 1, 0).copy_(torch.matmul(_blocks(T, h, 1, 1), x).neg_())
        h *= 2
    return T


def _segment(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    scale: float,
    state: torch.Tensor,
    C: int,
    s: int,
    keep_states: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One segment, shapes as chunked_scan; chunks of C tokens; s = 1 selects the halving path.

    Returns o [B, T, H, V] and the final state [B, H, K, V], or with keep_states the state
    after every chunk [N, B, H, K, V] (the last one is the final state).
    """
    B, T, H, K = q.shape
    V = v.shape[-1]
    N, (q, k, v, g, beta) = pad_to_chunks(q, k, v, g, beta, C)
    Z = B * H

    def chunks(x: torch.Tensor) -> torch.Tensor:
        return x.reshape(B, N, C, H, -1).permute(1, 0, 3, 2, 4)  # [N, B, H, C, *]

    qk = q.new_empty(N, B, H, C, 2, K)
    torch.mul(chunks(q), scale, out=qk[..., 0, :])
    qk[..., 1, :].copy_(chunks(k))
    qk = qk.view(N, Z, C, 2, K)
    q, k = qk[..., 0, :], qk[..., 1, :]  # [N, Z, C, K]
    b = chunks(beta.unsqueeze(-1)).reshape(N, Z, C, 1)
    G = torch.mul(chunks(g), LOG2E, out=g.new_empty(N, B, H, C, K)).view(N, Z, C, K)
    G = G.cumsum_(-2)  # [N, Z, C, K], base 2
    PA = _pairwise_anchored(qk, G, s) if s > 1 else _pairwise_halving(qk, G)
    P, A = PA[..., 0, :], PA[..., 1, :].mul_(b)  # [N, Z, C, C]
    Tm = _unit_lower_inverse(A, min(C, SUB_CHUNK)).unbind(0)
    decay_in = torch.exp2(G)  # [N, Z, C, K]
    bv = torch.mul(chunks(v), b.view(N, B, H, C, 1), out=v.new_empty(N, B, H, C, V))
    bv = bv.view(N, Z, C, V).unbind(0)
    bk = (k * b).mul_(decay_in).unbind(0)
    G_last = G[..., -1:, :]  # [N, Z, 1, K]
    k_out = (k * torch.exp2(G_last - G)).transpose(-1, -2).unbind(0)  # N x [Z, K, C]
    decay = torch.exp2(G_last).view(N, Z, K, 1).unbind(0)
    S_all = q.new_empty(N + 1, Z, K, V)
    V_all = q.new_empty(N, Z, C, V)
    r, tmp = q.new_empty(Z, C, V), q.new_empty(Z, K, V)
    S_in = S_all.unbind(0)
    S_in[0].copy_(state.reshape(Z, K, V))
    for i, v_new in enumerate(V_all.unbind(0)):
        torch.baddbmm(bv[i], bk[i], S_in[i], alpha=-1, out=r)  # [Z, C, V]
        torch.bmm(Tm[i], r, out=v_new)
        torch.mul(S_in[i], decay[i], out=tmp)
        torch.baddbmm(tmp, k_out[i], v_new, out=S_in[i + 1])  # [Z, K, V]
    o = torch.matmul(q * decay_in, S_all[:N]).view(N * Z, C, V)
    o = torch.baddbmm(o, P.reshape(N * Z, C, C), V_all.view(N * Z, C, V))
    o = o.view(N, B, H, C, V).permute(1, 0, 3, 2, 4).reshape(B, N * C, H, V)[:, :T]
    if keep_states:
        return o, S_all[1:].view(N, B, H, K, V).clone()
    return o, S_in[N].reshape(B, H, K, V).clone()


def sub_chunk_size(g: torch.Tensor, chunk: int) -> int:
    """16 (anchored path) when 15 * max|g| log2(e) leaves HEADROOM_BINADES in g's dtype, else 1."""
    s = min(chunk, SUB_CHUNK)
    bound = -math.log2(torch.finfo(g.dtype).tiny) - HEADROOM_BINADES
    if s == 1 or g.numel() == 0:
        return s
    lo, hi = torch.aminmax(g)
    return 1 if max(-float(lo), float(hi)) * LOG2E * (s - 1) > bound else s


def chunked_scan(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    scale: float,
    state: torch.Tensor,
    chunk_size: int,
    keep_states: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run the chunked form over validated inputs.

    q, k, g [B, T, H, K]; v [B, T, H, V]; beta [B, T, H]; state [B, H, K, V]; chunk_size a power
    of two (shrunk to the next power of two >= T for short inputs). The last chunk is padded
    with null tokens (q = k = v = 0, g = 0, beta = 0), which leave the state untouched.
    Returns o [B, T, H, V] and the final state [B, H, K, V], or with keep_states the state after
    every chunk [N, B, H, K, V], N = ceil(T / C) (the same arithmetic either way).
    """
    B, T, H, K = q.shape
    if T == 0:
        S0 = state.clone()
        return v.new_zeros(B, 0, H, v.shape[-1]), S0[None][:0] if keep_states else S0
    C = min(chunk_size, 1 << (T - 1).bit_length())
    L = max(C, SEGMENT_TOKENS // C * C)
    outs, kept = [], []
    for t0 in range(0, T, L):
        seg = slice(t0, t0 + L)
        x = (q[:, seg], k[:, seg], v[:, seg], g[:, seg], beta[:, seg])
        o, S = _segment(*x, scale, state, C, sub_chunk_size(x[3], C), keep_states)
        state = S[-1] if keep_states else S
        kept.append(S)
        outs.append(o)
    o = torch.cat(outs, dim=1) if len(outs) > 1 else outs[0]
    return o, torch.cat(kept) if keep_states else state


def kda_chunked(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    chunk_size: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The fast chunked (WY) form; same contract as kda_recurrent, any T (ragged last chunk).

    chunk_size must be a power of two in [1, 1024] (a shorter chunk is used when T is smaller).
    Computes in the input dtype; no exponent can overflow, whatever the gates (see
    the module docstring: anchored 16-token sub-chunks while |g| <= 5.08 in fp32, recursive
    halving otherwise). Agrees with kda_recurrent to ~1e-13 in float64.
    """
    shape = check_tokens(q, k, v, g, beta, initial_state, step=False)
    chunk = check_int("chunk_size", chunk_size, 1, 1024)
    if chunk & (chunk - 1):
        raise ParamError(f"chunk_size must be a power of two in [1, 1024], got {chunk}")
    scale = check_scale(scale, shape[3])
    S = start_state(initial_state, v, shape)
    return chunked_scan(q, k, v, g, beta, scale, S, chunk)


def kda_chunked_states(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    at: tuple[int, ...],
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    chunk_size: int = 64,
) -> tuple[torch.Tensor, torch.Tensor, tuple[torch.Tensor, ...]]:
    """kda_chunked that also returns the state after each position in `at`, for free.

    Every position must be a multiple of chunk_size in [chunk_size, T]: the chunked form
    computes those states anyway, so o and the final state are bit-identical to kda_chunked's.
    Returns (o [B, T, H, V], final state [B, H, K, V], one [B, H, K, V] per position).
    """
    shape = check_tokens(q, k, v, g, beta, initial_state, step=False)
    chunk = check_int("chunk_size", chunk_size, 1, 1024)
    if chunk & (chunk - 1):
        raise ParamError(f"chunk_size must be a power of two in [1, 1024], got {chunk}")
    T = shape[1]
    for p in at:
        if isinstance(p, bool) or not isinstance(p, int) or not chunk <= p <= T or p % chunk:
            raise ParamError(f"at must hold multiples of chunk_size={chunk} in [{chunk}, {T}], "
                             f"got {p!r}")
    S0 = start_state(initial_state, v, shape)
    if not at:
        o, S = chunked_scan(q, k, v, g, beta, check_scale(scale, shape[3]), S0, chunk)
        return o, S, ()
    o, states = chunked_scan(q, k, v, g, beta, check_scale(scale, shape[3]), S0, chunk,
                             keep_states=True)  # states [N, B, H, K, V]
    return o, states[-1].clone(), tuple(states[p // chunk - 1].clone() for p in at)
