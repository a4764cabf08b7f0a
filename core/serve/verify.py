"""Verify a draft window in one pass with plain decode's arithmetic, then commit a prefix of it.

`verify_window(model, tokens, state)` feeds T tokens (the pending token and T - 1 drafts) from
a DecodeState and returns logits [T, V] whose row t is, BIT FOR BIT, what T calls of
HybridLM.step give at position t. A one-token window IS HybridLM.step (on a copy of the state).
For T > 1, batching over the window is only used where the bits do not depend on it;
everything else runs per position with the step's own shapes:
  linear  torch's CPU matmul takes a different kernel at M = 1 rows (the step) than at M > 1, so
          a [T, D] x [D, N] projection runs as a bmm of T single-row products (torch's bmm
          calls the M = 1 mm per batch entry when D N >= BMM_NAIVE; below that, per row)
  act     an exp / sigmoid / silu over [T, w] puts a row's elements in the same vector lanes as
          at T = 1 only when w is a multiple of LANES; narrower or ragged widths run per position
  KDA     the short conv (one W-row window per position), beta's sigmoid (H lanes) and the
          recurrence (kda_step per position) run per position
  MLA     each position attends with MLA._attend itself over the keys it sees (the step rebuilds
          K and V from the latents with an S-row matmul whose bits depend on S)
  MoE     the window is routed at once (row-wise softmax and top-k); resident experts run as
          one bmm per matrix over every (position, slot) pair, streamed experts are fetched once
          each for the positions that chose them; each position adds its experts in its own
          top-k order (the step's index_add order)
Row-wise norms (RMSNorm, L2 normalisation), softmax over experts and exact ops (+, *, /, sqrt)
are batched. The tests pin the identity (tests/core/serve/test_verify.py). With a selection
policy (cache-aware routing) the window is routed on one residency snapshot, which sequential
steps would not see: exactness is for stock top-k routing.

The state is NOT advanced. `commit(state, window, n)` advances it by the first n positions:
  KDA   rollback by replay: verify_and_replay folds the n accepted raw inputs into the committed
        S (core.spec); n == T adopts the window's last state (nothing to undo). The conv tail is
        the last W - 1 rows of (committed tail, the n accepted pre-conv rows).
  MLA   the n accepted latents are appended; rejected ones are dropped.
so a committed state equals n HybridLM.step calls bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from core.errors import ParamError
from core.kda import kda_gate, kda_step
from core.model.experts import AllResident, ExpertProvider
from core.model.layers import KDA, MLA, KDAState, MLAState
from core.model.model import DecodeState, HybridLM
from core.model.moe import MoE, Routing, visit_order
from core.spec import DraftProjections, verify_and_replay

MAX_WINDOW = 64
# float32 elements per unrolled vector chunk of torch's CPU elementwise kernels: 2 x 16 on
# AVX-512 (2 x 8 on AVX2 divides it); the tail past the last whole chunk takes the scalar path
LANES = 32
BMM_NAIVE = 400  # torch's CPU bmm loops in its own kernel when D x 1 x N is below this


def _linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """F.linear(x, w) with every row computed as the M = 1 product the step computes.

    x [..., D], w [N, D] -> [..., N].
    """
    D, N = x.shape[-1], w.shape[0]
    rows = x.reshape(-1, D)  # [M, D]
    M = rows.shape[0]
    if M == 1:
        return F.linear(x, w)
    if D * N >= BMM_NAIVE:
        y = torch.bmm(rows.unsqueeze(1), w.t().unsqueeze(0).expand(M, D, N))  # [M, 1, N]
    else:
        y = torch.cat([F.linear(rows[i : i + 1], w) for i in range(M)])  # [M, N]
    return y.reshape(*x.shape[:-1], N)


def _each(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Row i of x [M, D] times its own w[i] [N, D], each as the step's M = 1 product: [M, N]."""
    D, N = x.shape[1], w.shape[1]
    if D * N >= BMM_NAIVE:
        return torch.bmm(x.unsqueeze(1), w.transpose(1, 2)).squeeze(1)
    return torch.cat([F.linear(x[i : i + 1], w[i]) for i in range(x.shape[0])])


def _per_position(fn: Callable[..., object], *xs: torch.Tensor, dim: int = 1) -> object:
    """fn on each position's slice (size 1 along dim), outputs concatenated along dim."""
    outs = [fn(*(x.narrow(dim, t, 1) for x in xs)) for t in range(xs[0].shape[dim])]
    if isinstance(outs[0], tuple):
        return tuple(torch.cat(parts, dim) for parts in zip(*outs, strict=True))
    return torch.cat(outs, dim)


def _act(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, width: int,
         dim: int = 1) -> torch.Tensor:
    """An elementwise transcendental over positions of `width` elements each."""
    if width % LANES == 0 or x.shape[dim] == 1:
        return fn(x)
    return _per_position(fn, x, dim=dim)


@dataclass(frozen=True)
class KDAWindow:
    """One KDA layer's tentative work: raw inputs (what replay needs) and the last state."""

    last_state: torch.Tensor  # [1, H, K, V]: S after all T positions
    last_conv: torch.Tensor  # [1, W - 1, 3C]: the conv tail after all T positions
    # None for a one-position window (it is always kept whole: nothing to roll back)
    drafts: DraftProjections | None  # q, k, g [1, T, H, K]; v [1, T, H, V]; beta [1, T, H]
    conv_rows: torch.Tensor | None  # [1, T, 3C]: pre-conv q|k|v rows (the conv's raw inputs)

    @property
    def replay_bytes(self) -> int:
        """What the replay scheme holds for this window: raw inputs + pre-conv rows."""
        d = self.drafts
        if d is None or self.conv_rows is None:
            return 0
        return sum(t.numel() * t.element_size()
                   for t in (d.q, d.k, d.v, d.g, d.beta, self.conv_rows))


@dataclass(frozen=True)
class Window:
    """A verified window: logits per position, per-layer tentative records, the routing."""

    tokens: tuple[int, ...]
    logits: torch.Tensor  # [T, V]
    layers: tuple[KDAWindow | torch.Tensor, ...]  # KDAWindow, or MLA latents [1, T, R]
    routing: tuple[Routing, ...]  # one per layer, over the T positions

    @property
    def size(self) -> int:
        return len(self.tokens)

    def greedy(self) -> list[int]:
        """The model's argmax at every position (row t: the token after tokens[t])."""
        return self.logits.argmax(-1).tolist()


# ---- the window pass ----------------------------------------------------------------------------
@torch.no_grad()
def verify_window(model: HybridLM, tokens: list[int] | tuple[int, ...], state: DecodeState,
                  provider: ExpertProvider | None = None) -> Window:
    """Logits of T tokens fed from `state` (batch of one); the state is left unchanged."""
    T = len(tokens)
    if not 1 <= T <= MAX_WINDOW:
        raise ParamError(f"tokens must hold 1 to {MAX_WINDOW} ids, got {T}")
    if len(state.tokens) != 1:
        raise ParamError(f"state must hold one sequence, got {len(state.tokens)}")
    if any(not isinstance(t, int) or not 0 <= t < model.dims.vocab for t in tokens):
        raise ParamError(f"tokens must be ids in [0, {model.dims.vocab - 1}], got {tokens!r}")
    provider = provider or model.resident()
    if T == 1:  # no drafts: the step itself, on a copy of the state
        return _one(model, tokens[0], state, provider)
    idx = torch.tensor([list(tokens)], dtype=torch.long)  # [1, T]
    x = model.embed(idx)  # [1, T, D]
    layers: list[KDAWindow | torch.Tensor] = []
    routing = []
    for b, s in zip(model.blocks, state.layers, strict=True):
        h = b.norm1(x)
        if b.kind == "kda":
            mixed, rec = _kda(b.mixer, h, s)
        else:
            mixed, rec = _mla(b.mixer, h, s)
        layers.append(rec)
        x = x + mixed  # [1, T, D]
        y, r = _moe(b.moe, b.norm2(x), provider)
        routing.append(r)
        x = x + y
    logits = _linear(model.norm(x), model.lm_head.weight)[0]  # [T, V]
    return Window(tokens=tuple(tokens), logits=logits, layers=tuple(layers),
                  routing=tuple(routing))


def _one(model: HybridLM, token: int, state: DecodeState, provider: ExpertProvider) -> Window:
    """A one-token window: HybridLM.step on a shallow copy (step replaces tensors, never
    writes into them, so the caller's state is untouched)."""
    layers = [KDAState(s.conv, s.S) if isinstance(s, KDAState) else MLAState(s.latent)
              for s in state.layers]
    copy = DecodeState(layers, state.pos, [list(state.tokens[0])])
    out = model.step(torch.tensor([token]), copy, provider)
    recs = tuple(KDAWindow(last_state=s.S, last_conv=s.conv, drafts=None, conv_rows=None)
                 if isinstance(s, KDAState) else s.latent[:, -1:] for s in copy.layers)
    return Window(tokens=(token,), logits=out.logits, layers=recs, routing=out.routing)


def _kda(m: KDA, x: torch.Tensor, st: KDAState) -> tuple[torch.Tensor, KDAWindow]:
    """KDA.step over T positions: x [1, T, D] -> ([1, T, D], the window's raw inputs)."""
    d = m.d
    T, W, H, K, C = x.shape[1], d.conv_size, d.kda_heads, d.kda_head_dim, d.kda_inner
    raw = _linear(x, m.qkv_proj.weight)  # [1, T, 3C]
    padded = torch.cat([st.conv, raw], 1)  # [1, W - 1 + T, 3C]
    taps = m.conv.t().unsqueeze(0)  # [1, W, 3C]
    mixed = torch.cat([F.silu((padded[:, t : t + W] * taps).sum(1, keepdim=True))
                       for t in range(T)], 1)  # [1, T, 3C]
    q, k, v = mixed.view(1, T, 3, H, K).unbind(2)  # [1, T, H, K]
    q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
    z = _linear(_linear(x, m.f_down.weight), m.f_up.weight).view(1, T, H, K)  # [1, T, H, K]
    g = _act(lambda z_: kda_gate(z_, m.A_log, m.dt_bias, "lowerbound", d.gate_lower_bound),
             z, C)  # [1, T, H, K]
    beta = _act(torch.sigmoid, _linear(x, m.b_proj.weight), H)  # [1, T, H]
    S, outs = st.S, []
    for t in range(T):
        o_t, S = kda_step(q[:, t], k[:, t], v[:, t], g[:, t], beta[:, t], S)  # [1, H, V]
        outs.append(o_t)
    o = torch.stack(outs, 1)  # [1, T, H, V]
    gate = _act(torch.sigmoid, _linear(_linear(x, m.g_down.weight), m.g_up.weight), C)
    y = _linear(m.o_norm(o).reshape(1, T, -1) * gate, m.o_proj.weight)  # [1, T, D]
    return y, KDAWindow(last_state=S, last_conv=padded[:, T:],
                        drafts=DraftProjections(q, k, v, g, beta), conv_rows=raw)


def _mla(m: MLA, x: torch.Tensor, st: MLAState) -> tuple[torch.Tensor, torch.Tensor]:
    """MLA.step over T positions: x [1, T, D] -> ([1, T, D], the T new latents [1, T, R])."""
    T, L = x.shape[1], st.latent.shape[1]
    c = m.kv_norm(_linear(x, m.kv_down.weight))  # [1, T, R]
    latent = torch.cat([st.latent, c], 1)  # [1, L + T, R]
    y = torch.cat([m._attend(x[:, t : t + 1], latent[:, : L + t + 1], causal=False)
                   for t in range(T)], 1)  # [1, T, D]
    return y, c


def _moe(moe: MoE, x: torch.Tensor, provider: ExpertProvider) -> tuple[torch.Tensor, Routing]:
    """MoE.forward over T positions, each adding its experts in its own top-k order."""
    d, layer = moe.d, moe.layer
    _, T, D = x.shape
    flat = x.reshape(T, D)  # [T, D]
    scores = _linear(flat, moe.router.weight).softmax(-1)  # [T, E]
    if provider.policy is None:
        top, ids = scores.topk(d.top_k, dim=-1)  # [T, k]
        weights = top / top.sum(-1, keepdim=True)
    else:
        resident = provider.resident(layer, d.n_experts)  # [E] bool
        ids, weights = provider.policy.select(layer, scores, resident)
    r = Routing(scores, ids, weights, visit_order(ids))
    provider.routed(layer, r)

    def ffn(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, w3: torch.Tensor,
            inner: int) -> torch.Tensor:  # expert_ffn, row by row
        return _linear(_act(F.silu, _linear(x, w1), inner, dim=0) * _linear(x, w3), w2)

    out = ffn(flat, moe.shared_w1.weight, moe.shared_w2.weight, moe.shared_w3.weight,
              d.shared_inner)  # [T, D]
    k = d.top_k
    if type(provider) is AllResident:  # every (position, slot) pair in one bmm per matrix
        w1s, w2s, w3s = provider.stacks[layer]
        pairs = ids.reshape(-1)  # [T k]: pair t k + j is position t's slot j
        xp = flat.repeat_interleave(k, 0)  # [T k, D]
        h = _act(F.silu, _each(xp, w1s[pairs]), d.expert_inner, dim=0) * _each(xp, w3s[pairs])
        ys = _each(h, w2s[pairs]).view(T, k, D) * weights[..., None]  # [T, k, D]
    else:  # streamed: each expert once, for the positions that chose it
        ys = flat.new_zeros(T, k, D)
        for e, (w1, w2, w3) in provider.experts(layer, r.order):
            rows, slot = (ids == e).nonzero(as_tuple=True)
            y = ffn(flat[rows], w1, w2, w3, d.expert_inner)  # [n, D]
            ys[rows, slot] = y * weights[rows, slot, None]
    provider.consumed(layer, r)
    for j in range(k):  # the step adds slot 0, then slot 1, ... (its visit order)
        out = out + ys[:, j]
    return out.view(1, T, D), r


# ---- commit ------------------------------------------------------------------------------------
def commit(state: DecodeState, window: Window, n: int,
           on_replay: Callable[[int], None] | None = None) -> int:
    """Advance `state` by the window's first n positions (1 <= n <= T); returns the positions
    replayed per KDA layer (0 when the whole window is kept)."""
    T = window.size
    if not 1 <= n <= T:
        raise ParamError(f"n must be in [1, {T}] (the window's positions), got {n}")
    replayed = 0 if n == T else n
    for s, rec in zip(state.layers, window.layers, strict=True):
        if isinstance(s, KDAState):
            assert isinstance(rec, KDAWindow)
            if n == T:
                s.S, s.conv = rec.last_state, rec.last_conv
            else:  # rollback: the committed S plus a replay of what was accepted
                assert rec.drafts is not None and rec.conv_rows is not None
                s.S, _ = verify_and_replay(s.S, rec.drafts, n)
                W = s.conv.shape[1]
                s.conv = torch.cat([s.conv, rec.conv_rows[:, :n]], 1)[:, n : n + W]  # [1,W-1,3C]
        else:
            s.latent = torch.cat([s.latent, rec[:, :n]], 1)  # [1, L + n, R]
    state.pos += n
    state.tokens[0].extend(window.tokens[:n])
    if on_replay is not None:
        on_replay(replayed)
    return replayed
