"""The token mixers: RMSNorm, a KDA layer (core/kda/) and an MLA layer with a latent KV cache.

Each mixer answers a ragged batch (`forward_groups`): groups of G sequences that each feed T
tokens, every group with its own state, all of them through the same flat projections. A
group runs KDA in one of two modes: chunked (a prefill: kda_chunked over the T tokens, or its
autograd twin while training) or recurrent (decode and verify: kda_step per token). Mixers
never change a state: they return what the group's sequences would become (KDAOut, or the T
new MLA latents), and the caller commits it (core/model/model.py, core/serve). So a prefill
followed by steps equals steps all the way, to float32 rounding, and with INVARIANT kernels a
token's bits do not depend on what else is in the batch (core/model/kernels.py):
  the short conv   tap by tap, out_t = x_t w_0 + x_{t+1} w_1 + ..., each product and sum an
                   exactly rounded op in the same order for a prefill token and a decode step
                   (FAST: conv1d for a prefill, a window sum for a step)
  attention        core/model/attention.py: a query's key row is its own 64-token block
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F

from core.kda import kda_chunked, kda_chunked_states, kda_gate, kda_step
from core.kda.differentiable import kda_chunked_autograd
from core.kda.recurrent import kda_step_products
from core.model.attention import BLOCK
from core.model.clock import timed
from core.model.config import ModelDims
from core.model.kernels import INVARIANT, Kernels, fused
from core.speculative.drafts import DraftProjections


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self._eps = torch.tensor(eps)  # not a buffer: the state dict stays as it was
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor, kx: Kernels = INVARIANT) -> torch.Tensor:
        return kx.rms(x, self.weight, self._eps)


@dataclass(slots=True)
class KDAState:
    conv: torch.Tensor  # [B, conv_size - 1, 3 * C]: last pre-conv q|k|v inputs
    S: torch.Tensor  # [B, H, K, V]: the delta-rule state
    # filled by a prefill asked to capture: the state after each requested position (a copy)
    captured: list[KDAState] = field(default_factory=list)


@dataclass(slots=True)
class MLAState:
    latent: torch.Tensor  # [B, t, R]: normalised KV latents of every past token


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupView:
    """Where a group's tokens sit in the flat batch: rows [start, start + G T), row-major."""

    start: int
    G: int
    T: int
    recurrent: bool
    capture_at: tuple[int, ...] = ()  # chunked only: positions of this call, multiples of 64
    keep_inputs: bool = False  # recurrent only: keep KDA's raw inputs for rollback by replay

    @property
    def rows(self) -> slice:
        return slice(self.start, self.start + self.G * self.T)


@dataclass(frozen=True, slots=True, kw_only=True)
class KDAOut:
    """One KDA layer's result for a group: its states after the T tokens, and what was kept."""

    S: torch.Tensor  # [G, H, K, V]
    conv: torch.Tensor  # [G, W - 1, 3C]
    captured: tuple[KDAState, ...] = ()  # one per capture position, G-batched
    inputs: DraftProjections | None = None  # keep_inputs: q, k, g [G, T, H, K], ...
    conv_rows: torch.Tensor | None = None  # keep_inputs: pre-conv q|k|v rows [G, T, 3C]

    def row(self, i: int) -> KDAOut:
        """Sequence i's record alone (views, batch of one)."""
        d = self.inputs
        return KDAOut(
            S=self.S[i : i + 1], conv=self.conv[i : i + 1],
            captured=tuple(KDAState(c.conv[i : i + 1], c.S[i : i + 1]) for c in self.captured),
            inputs=None if d is None else d.map(lambda x: x[i : i + 1]),
            conv_rows=None if self.conv_rows is None else self.conv_rows[i : i + 1])

    @property
    def replay_bytes(self) -> int:
        """What the replay scheme holds for this window: raw inputs + pre-conv rows."""
        d = self.inputs
        if d is None or self.conv_rows is None:
            return 0
        return sum(t.numel() * t.element_size()
                   for t in (d.q, d.k, d.v, d.g, d.beta, self.conv_rows))


@dataclass(frozen=True, slots=True, kw_only=True)
class _Scan:
    """One group's inputs to the recurrence."""

    grp: GroupView
    q: torch.Tensor  # [G, T, H, K]
    k: torch.Tensor
    v: torch.Tensor  # [G, T, H, V]
    g: torch.Tensor  # [G, T, H, K]
    beta: torch.Tensor  # [G, T, H]
    S0: torch.Tensor | None  # [G, H, K, V]
    padded: torch.Tensor  # [G, W - 1 + T, 3C]: the conv tail, then the raw rows
    raw: torch.Tensor  # [G, T, 3C]


def _prefill_scan(xs: list[_Scan]) -> list[tuple[torch.Tensor, torch.Tensor,
                                                   tuple[KDAState, ...]]]:
    """A batch's prefill groups, one kda_chunked call per number of 64-token chunks: each
    sequence padded with null tokens (q = k = v = 0, g = 0, beta = 0, which leave the state as
    it was) to whole chunks, so it runs the same 64-token chunks, with the same arithmetic,
    alone or beside others (sequences with as many chunks share a call: no chunk is padding).
    Returns (o [G, T, H, V], final S, captured) for each group, in order."""
    by_chunks: dict[int, list[int]] = {}
    for i, x in enumerate(xs):
        by_chunks.setdefault(-(-x.grp.T // BLOCK), []).append(i)
    done: dict[int, tuple[torch.Tensor, torch.Tensor, tuple[KDAState, ...]]] = {}
    for n, members in by_chunks.items():
        done.update(zip(members, _chunked_call([xs[i] for i in members], BLOCK * n),
                        strict=True))
    return [done[i] for i in range(len(xs))]


def _chunked_call(xs: list[_Scan], T_pad: int
                  ) -> list[tuple[torch.Tensor, torch.Tensor, tuple[KDAState, ...]]]:
    """Groups whose sequences all take T_pad / 64 chunks, in one kda_chunked call."""

    def pad(y: torch.Tensor, T: int) -> torch.Tensor:  # [G, T, ...] -> [G, T_pad, ...]
        return F.pad(y, (0, 0) * (y.dim() - 2) + (0, T_pad - T)) if T < T_pad else y

    cat = [torch.cat([pad(getattr(x, f), x.grp.T) for x in xs]) for f in ("q", "k", "v", "g",
                                                                         "beta")]
    H, K = xs[0].q.shape[2], xs[0].q.shape[3]
    S0 = torch.cat([x.S0 if x.S0 is not None else x.q.new_zeros(x.grp.G, H, K, K) for x in xs])
    keep = any(x.grp.capture_at for x in xs)
    if keep:  # the states after every chunk: captures read theirs
        o, S, at = kda_chunked_states(*cat, tuple(range(BLOCK, T_pad + 1, BLOCK)),
                                      initial_state=S0)
    else:
        o, S = kda_chunked(*cat, initial_state=S0)  # [n, T_pad, H, V], [n, H, K, V]
    out, row = [], 0
    W = xs[0].padded.shape[1] - xs[0].grp.T + 1
    for x in xs:
        G, T = x.grp.G, x.grp.T
        captured = tuple(KDAState(x.padded[:, p : p + W - 1].clone(),
                                  at[p // BLOCK - 1][row : row + G])
                         for p in x.grp.capture_at) if keep else ()
        out.append((o[row : row + G, :T], S[row : row + G], captured))
        row += G
    return out


class KDA(nn.Module):
    """fla `layers/kda.py` in miniature: conv'd q/k/v, L2-normalised q/k, lower-bound gate."""

    def __init__(self, d: ModelDims) -> None:
        super().__init__()
        self.d = d
        D, C, H, r = d.d_model, d.kda_inner, d.kda_heads, d.gate_rank
        self.qkv_proj = nn.Linear(D, 3 * C, bias=False)
        self.conv = nn.Parameter(torch.randn(3 * C, d.conv_size) / math.sqrt(d.conv_size))
        self.f_down = nn.Linear(D, r, bias=False)  # gate pre-activation (low rank)
        self.f_up = nn.Linear(r, C, bias=False)
        self.b_proj = nn.Linear(D, H, bias=False)  # beta = sigmoid(b_proj x)
        self.A_log = nn.Parameter(torch.log(torch.linspace(1.0, 16.0, H)))
        self.dt_bias = nn.Parameter(torch.zeros(C))
        self.g_down = nn.Linear(D, r, bias=False)  # output gate (low rank)
        self.g_up = nn.Linear(r, C, bias=False)
        self.o_norm = RMSNorm(d.kda_head_dim)
        self.o_proj = nn.Linear(C, D, bias=False)

    def init_state(self, B: int, like: torch.Tensor) -> KDAState:
        d = self.d
        conv = like.new_zeros(B, d.conv_size - 1, 3 * d.kda_inner)
        S = like.new_zeros(B, d.kda_heads, d.kda_head_dim, d.kda_head_dim)
        return KDAState(conv, S)

    def _conv(self, padded: torch.Tensor, T: int, kx: Kernels) -> torch.Tensor:
        """padded [G, W - 1 + T, 3C] (tail, then the T raw rows) -> [G, T, 3C] before silu."""
        W = self.d.conv_size
        taps = self.conv.t()  # [W, 3C]
        if kx.invariant:
            out = padded[:, 0:T] * taps[0]
            for j in range(1, W):
                out = out + padded[:, j : j + T] * taps[j]
            return out
        if T == 1:
            return (padded * taps.unsqueeze(0)).sum(1, keepdim=True)
        return F.conv1d(padded.transpose(1, 2), self.conv.unsqueeze(1),
                        groups=padded.shape[-1]).transpose(1, 2)

    def project(self, h: torch.Tensor, kx: Kernels) -> tuple[torch.Tensor, ...]:
        """h [..., D] -> the pre-conv q|k|v rows [..., 3C], the two low-rank gate inputs
        [..., r] (f, g) and beta's pre-activation [..., H]: one product for all four."""
        d = self.d
        proj = kx.linear(h, fused(self, self.qkv_proj, self.f_down, self.g_down, self.b_proj))
        return proj.split([3 * d.kda_inner, d.gate_rank, d.gate_rank, d.kda_heads], -1)

    def forward_groups(self, h: torch.Tensor, groups: Sequence[GroupView],
                       states: Sequence[KDAState | None], kx: Kernels
                       ) -> tuple[torch.Tensor, list[KDAOut]]:
        """h [N, D] (the batch's rows) -> ([N, D], one KDAOut per group)."""
        d = self.d
        N = h.shape[0]
        W, H, K, C = d.conv_size, d.kda_heads, d.kda_head_dim, d.kda_inner
        raw, f_low, g_low, b = self.project(h, kx)
        z = kx.linear(f_low, self.f_up.weight)  # [N, C]
        g_all = kda_gate(z.view(1, N, H, K), self.A_log, self.dt_bias, "lowerbound",
                         d.gate_lower_bound, sigmoid=kx.sigmoid)[0]  # [N, H, K]
        beta_all = kx.sigmoid(b)  # [N, H]
        gate = kx.sigmoid(kx.linear(g_low, self.g_up.weight))  # [N, C]
        inputs = []
        for grp, st in zip(groups, states, strict=True):
            G, T, rows = grp.G, grp.T, grp.rows
            raw_g = raw[rows].view(G, T, 3 * C)
            tail = st.conv if st is not None else raw.new_zeros(G, W - 1, 3 * C)
            padded = torch.cat([tail, raw_g], 1)  # [G, W - 1 + T, 3C]
            mixed = kx.silu(self._conv(padded, T, kx)).view(G, T, 3, H, K)  # [G, T, 3, H, K]
            q, k = F.normalize(mixed[:, :, :2], dim=-1).unbind(2)  # [G, T, H, K], L2 rows
            inputs.append(_Scan(grp=grp, q=q, k=k, v=mixed[:, :, 2],
                                g=g_all[rows].view(G, T, H, K), beta=beta_all[rows].view(G, T, H),
                                S0=st.S if st is not None else None, padded=padded, raw=raw_g))
        with timed("attention"):
            prefill = [x for x in inputs if not x.grp.recurrent and not torch.is_grad_enabled()]
            done = dict(zip(map(id, prefill), _prefill_scan(prefill), strict=True))
            for x in inputs:
                if id(x) not in done:
                    done[id(x)] = self._scan(x, kx)
        outs, o_parts = [], []
        for x in inputs:
            o, S, captured = done[id(x)]
            keep = x.grp.recurrent and x.grp.keep_inputs and x.grp.T > 1
            outs.append(KDAOut(
                S=S.detach(), conv=x.padded[:, x.grp.T:].detach(), captured=captured,
                inputs=DraftProjections(q=x.q, k=x.k, v=x.v, g=x.g, beta=x.beta) if keep else None,
                conv_rows=x.raw if keep else None))
            o_parts.append(o.reshape(x.grp.G * x.grp.T, H, K))
        o = torch.cat(o_parts) if len(o_parts) > 1 else o_parts[0]  # [N, H, V]
        y = kx.linear(self.o_norm(o, kx).reshape(N, C) * gate, self.o_proj.weight)
        return y, outs

    def _scan(self, x: _Scan, kx: Kernels
              ) -> tuple[torch.Tensor, torch.Tensor, tuple[KDAState, ...]]:
        """A recurrent group (kda_step per token; a FAST decode group's single token as
        batched products) or a training one (the autograd form): (o [G, T, H, V], final S,
        no captures)."""
        q, k, v, g, beta = x.q, x.k, x.v, x.g, x.beta
        G, T, H, K = q.shape
        if not x.grp.recurrent:  # NOTE: kda_chunked writes with out=: no autograd
            o, S = kda_chunked_autograd(q, k, v, g, beta, initial_state=x.S0)
            return o, S, ()
        S = x.S0 if x.S0 is not None else q.new_zeros(G, H, K, K)
        if T == 1:
            step = kda_step if kx.invariant or x.grp.keep_inputs else kda_step_products
            o_t, S = step(q[:, 0], k[:, 0], v[:, 0], g[:, 0], beta[:, 0], S)
            return o_t.unsqueeze(1), S, ()  # [G, 1, H, V]
        qt, kt, vt, gt = (y.transpose(0, 1).contiguous() for y in (q, k, v, g))  # [T, G, ...]
        bt = beta.transpose(0, 1).contiguous()  # [T, G, H]: each step's rows contiguous
        steps = []
        for t in range(T):
            o_t, S = kda_step(qt[t], kt[t], vt[t], gt[t], bt[t], S)
            steps.append(o_t)
        return torch.stack(steps, 1), S, ()  # [G, T, H, V]

    def forward(self, x: torch.Tensor, state: KDAState | None = None,
                capture_at: tuple[int, ...] = (), kx: Kernels = INVARIANT) -> torch.Tensor:
        """x [B, T, D] -> [B, T, D], chunked; advances state in place when given (and keeps
        the states after capture_at positions in state.captured)."""
        B, T, D = x.shape
        grp = GroupView(start=0, G=B, T=T, recurrent=False, capture_at=capture_at)
        y, (out,) = self.forward_groups(x.reshape(B * T, D), [grp], [state], kx)
        if state is not None:
            state.S, state.conv, state.captured = out.S, out.conv, list(out.captured)
        return y.view(B, T, D)

    def step(self, x: torch.Tensor, state: KDAState, kx: Kernels = INVARIANT) -> torch.Tensor:
        """x [B, 1, D] -> [B, 1, D] with kda_step; advances state in place."""
        B, _, D = x.shape
        grp = GroupView(start=0, G=B, T=1, recurrent=True)
        y, (out,) = self.forward_groups(x.reshape(B, D), [grp], [state], kx)
        state.S, state.conv = out.S, out.conv
        return y.view(B, 1, D)
