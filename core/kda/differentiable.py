"""The chunked (WY) form of KDA written for autograd: `kda_chunked_autograd`, the training path.

Same algebra as core/kda/chunked.py, per chunk of C tokens with S the chunk's start state and
G the within-chunk cumulative (natural-log) gates, G non-increasing:

    P[j, i]  = scale <q_j * exp(G_j - G_i), k_i>                   i <= j
    A[j, i]  = beta_j <k_j * exp(G_j - G_i), k_i>                   i <  j   (strictly lower)
    T        = (I + A)^-1 = (I - A)(I + A^2)(I + A^4)...            A is nilpotent: exact
    v'       = T (beta v) - T (beta exp(G) k) S                     corrected values
    o        = scale (q * exp(G)) S + P v'
    S'       = Diag(exp(G_C)) S + (exp(G_C - G) * k)^T v'

Unlike kda_chunked (which writes into preallocated buffers with out=, invisible to autograd),
every tensor here is produced out of place and the chunk loop carries S as a value, so
backward() differentiates q, k, v, g, beta and the initial state. Two ways to form the
pairwise decays exp(G_j - G_i):
* anchored (fast, matmuls): q_j exp(G_j - G_m) . k_i exp(G_m - G_i) with the anchor m in the
  middle of the chunk; every factor stays within exp(+-(C/2) max|g|), used only while that is
  ANCHOR_HEADROOM nats inside the dtype's range (fp32, C = 16: |g| <= 7.3).
* pairwise (any gate): a [C, C, K] tensor whose masked exponents are set to -inf before exp,
  so no exponent is ever positive (gates near -1000 included).
"""

from __future__ import annotations

import math

import torch

from core.errors import check_int
from core.kda.validate import check_scale, check_tokens, pad_to_chunks

TRAIN_CHUNK = 16
ANCHOR_HEADROOM = 30.0  # nats kept free below the dtype's overflow by the anchored path


def anchored_ok(g: torch.Tensor, chunk: int) -> bool:
    """True when (chunk / 2) max|g| stays ANCHOR_HEADROOM nats inside g's dtype range."""
    if g.numel() == 0:
        return True
    limit = math.log(torch.finfo(g.dtype).max) - ANCHOR_HEADROOM
    return float(g.detach().abs().max()) * (chunk - chunk // 2) <= limit


def _scores_anchored(q: torch.Tensor, k: torch.Tensor, G: torch.Tensor
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """(q . k, k . k) with decays exp(G_j - G_i) [N, Z, C, C], unmasked; q, k, G [N, Z, C, K]."""
    Gm = G[..., G.shape[-2] // 2, None, :]  # [N, Z, 1, K]: the anchor
    up, down = (G - Gm).exp(), (Gm - G).exp()  # [N, Z, C, K]
    kd = (k * down).transpose(-1, -2)  # [N, Z, K, C]
    return (q * up) @ kd, (k * up) @ kd  # [N, Z, C, C] each


def _scores_pairwise(q: torch.Tensor, k: torch.Tensor, G: torch.Tensor
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """Same contract as _scores_anchored; exact for any gates (0 above the diagonal)."""
    C = G.shape[-2]
    causal = torch.ones(C, C, dtype=torch.bool, device=G.device).tril()  # [C, C]
    diff = G.unsqueeze(-2) - G.unsqueeze(-3)  # [N, Z, C(j), C(i), K]
    kE = k.unsqueeze(-3) * torch.where(causal[:, :, None], diff, -math.inf).exp()
    return (q.unsqueeze(-2) * kE).sum(-1), (k.unsqueeze(-2) * kE).sum(-1)  # [N, Z, C, C]


def unit_lower_inverse(A: torch.Tensor) -> torch.Tensor:
    """(I + A)^-1 for strictly lower A [..., C, C]: (I - A)(I + A^2)(I + A^4)... (A^C = 0)."""
    C = A.shape[-1]
    eye = torch.eye(C, dtype=A.dtype, device=A.device)
    T, X = eye - A, A
    for _ in range((C - 1).bit_length() - 1):
        X = X @ X  # A^2, A^4, ...
        T = T + T @ X  # [..., C, C]
    return T


def kda_chunked_autograd(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    chunk_size: int = TRAIN_CHUNK,
    *,
    anchored: bool | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Chunked KDA with a backward pass; same contract as kda_recurrent, any T.

    q, k, g [B, T, H, K]; v [B, T, H, V]; beta [B, T, H]; initial_state [B, H, K, V] or None
    (zeros); chunk_size an integer in [1, 256]; anchored None picks the path from the gates
    (see the module docstring), True / False forces it. Returns (o [B, T, H, V], final state
    [B, H, K, V]). The ragged last chunk is padded with null tokens (q = k = v = 0, g = 0,
    beta = 0), which leave the state untouched. Agrees with the float64 recurrence, outputs and
    gradients, to ~1e-14.
    """
    B, T, H, K, V = check_tokens(q, k, v, g, beta, initial_state, step=False)
    C = min(check_int("chunk_size", chunk_size, 1, 256), max(T, 1))
    scale = check_scale(scale, K)
    S = v.new_zeros(B, H, K, V) if initial_state is None else initial_state
    if T == 0:
        return v.new_zeros(B, 0, H, V), S
    if anchored is None:
        anchored = anchored_ok(g, C)
    N, (q, k, v, g, beta) = pad_to_chunks(q, k, v, g, beta, C)
    Z = B * H

    def chunks(x: torch.Tensor) -> torch.Tensor:
        return x.reshape(B, N, C, H, -1).permute(1, 0, 3, 2, 4).reshape(N, Z, C, -1)

    q, k, v, g, b = (chunks(x) for x in (q, k, v, g, beta.unsqueeze(-1)))  # [N, Z, C, *]
    G = g.cumsum(-2)  # [N, Z, C, K]
    qk, kk = (_scores_anchored if anchored else _scores_pairwise)(q, k, G)  # [N, Z, C, C]
    mask = torch.ones(C, C, dtype=torch.bool, device=q.device).tril()  # [C, C]
    P = torch.where(mask, qk * scale, 0.0)  # [N, Z, C, C], i <= j
    Tm = unit_lower_inverse(torch.where(mask.tril(-1), kk * b, 0.0))  # [N, Z, C, C]
    decay_in = G.exp()  # [N, Z, C, K], in (0, 1]
    u = Tm @ (b * v)  # [N, Z, C, V]
    w = Tm @ (b * decay_in * k)  # [N, Z, C, K]
    qd = scale * q * decay_in  # [N, Z, C, K]
    G_last = G[..., -1:, :]  # [N, Z, 1, K]
    k_out = (k * (G_last - G).exp()).transpose(-1, -2)  # [N, Z, K, C]
    decay = G_last.exp().transpose(-1, -2)  # [N, Z, K, 1]
    S = S.reshape(Z, K, V)
    outs = []
    for u_n, w_n, qd_n, P_n, ko_n, d_n in zip(
        *(x.unbind(0) for x in (u, w, qd, P, k_out, decay)), strict=True
    ):
        v_new = u_n - w_n @ S  # [Z, C, V]
        outs.append(qd_n @ S + P_n @ v_new)  # [Z, C, V]
        S = d_n * S + ko_n @ v_new  # [Z, K, V]
    o = torch.stack(outs).view(N, B, H, C, V).permute(1, 0, 3, 2, 4).reshape(B, N * C, H, V)
    return o[:, :T], S.view(B, H, K, V)
