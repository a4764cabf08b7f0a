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
from core.model.attention import Span, attend, key_rows
from core.model.clock import timed
from core.model.config import ModelDims
from core.model.kernels import INVARIANT, Kernels, fused
from core.spec.drafts import DraftProjections


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor, kx: Kernels = INVARIANT) -> torch.Tensor:
        return kx.rms(x, self.weight, self.eps)


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
            inputs=None if d is None else DraftProjections(
                *(x[i : i + 1] for x in (d.q, d.k, d.v, d.g, d.beta))),
            conv_rows=None if self.conv_rows is None else self.conv_rows[i : i + 1])

    @property
    def replay_bytes(self) -> int:
        """What the replay scheme holds for this window: raw inputs + pre-conv rows."""
        d = self.inputs
        if d is None or self.conv_rows is None:
            return 0
        return sum(t.numel() * t.element_size()
                   for t in (d.q, d.k, d.v, d.g, d.beta, self.conv_rows))


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
        outs, o_parts = [], []
        for grp, st in zip(groups, states, strict=True):
            G, T, rows = grp.G, grp.T, grp.rows
            raw_g = raw[rows].view(G, T, 3 * C)
            tail = st.conv if st is not None else raw.new_zeros(G, W - 1, 3 * C)
            padded = torch.cat([tail, raw_g], 1)  # [G, W - 1 + T, 3C]
            mixed = kx.silu(self._conv(padded, T, kx))  # [G, T, 3C]
            q, k, v = mixed.view(G, T, 3, H, K).unbind(2)  # [G, T, H, K]
            q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
            g, beta = g_all[rows].view(G, T, H, K), beta_all[rows].view(G, T, H)
            S0 = st.S if st is not None else None
            with timed("attention"):
                o, S, captured = self._scan(grp, q, k, v, g, beta, S0, padded)
            keep = grp.recurrent and grp.keep_inputs and T > 1
            outs.append(KDAOut(
                S=S.detach(), conv=padded[:, T:].detach(), captured=captured,
                inputs=DraftProjections(q, k, v, g, beta) if keep else None,
                conv_rows=raw_g if keep else None))
            o_parts.append(o.reshape(G * T, H, K))
        o = torch.cat(o_parts) if len(o_parts) > 1 else o_parts[0]  # [N, H, V]
        y = kx.linear(self.o_norm(o, kx).reshape(N, C) * gate, self.o_proj.weight)
        return y, outs

    def _scan(self, grp: GroupView, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
              g: torch.Tensor, beta: torch.Tensor, S0: torch.Tensor | None,
              padded: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, tuple[KDAState, ...]]:
        """The recurrence over a group's T tokens: (o [G, T, H, V], final S, captured)."""
        G, T, H, K = q.shape
        W = self.d.conv_size
        captured: tuple[KDAState, ...] = ()
        if grp.recurrent:
            S = S0 if S0 is not None else q.new_zeros(G, H, K, K)
            steps = []
            for t in range(T):
                o_t, S = kda_step(q[:, t], k[:, t], v[:, t], g[:, t], beta[:, t], S)
                steps.append(o_t)
            o = torch.stack(steps, 1)  # [G, T, H, V]
        elif torch.is_grad_enabled():  # NOTE: kda_chunked writes with out=: no autograd
            o, S = kda_chunked_autograd(q, k, v, g, beta, initial_state=S0)
        elif grp.capture_at:  # prefix checkpoints: the same arithmetic as kda_chunked
            o, S, at = kda_chunked_states(q, k, v, g, beta, grp.capture_at, initial_state=S0)
            captured = tuple(KDAState(padded[:, p : p + W - 1].clone(), s_p)
                             for p, s_p in zip(grp.capture_at, at, strict=True))
        else:  # NOTE: inference stays on kda_chunked, bit for bit what the weights shipped with
            o, S = kda_chunked(q, k, v, g, beta, initial_state=S0)  # [G, T, H, V]
        return o, S, captured

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


class MLA(nn.Module):
    """Multi-head latent attention: K and V are rebuilt from an R-wide latent; no RoPE."""

    def __init__(self, d: ModelDims) -> None:
        super().__init__()
        self.d = d
        D, Hd, R = d.d_model, d.mla_heads * d.mla_head_dim, d.kv_latent
        self.q_proj = nn.Linear(D, Hd, bias=False)
        self.kv_down = nn.Linear(D, R, bias=False)
        self.kv_norm = RMSNorm(R)
        self.k_up = nn.Linear(R, Hd, bias=False)
        self.v_up = nn.Linear(R, Hd, bias=False)
        self.o_proj = nn.Linear(Hd, D, bias=False)

    def init_state(self, B: int, like: torch.Tensor) -> MLAState:
        return MLAState(like.new_zeros(B, 0, self.d.kv_latent))

    def forward_groups(self, h: torch.Tensor, groups: Sequence[GroupView],
                       states: Sequence[Sequence[torch.Tensor] | None], kx: Kernels
                       ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """h [N, D] -> ([N, D], each group's T new latents [G, T, R]).

        states: per group, the G sequences' past latents [L_g, R] (None: no past)."""
        d = self.d
        N, R, hd, e = h.shape[0], d.kv_latent, d.mla_heads, d.mla_head_dim
        q, c = kx.linear(h, fused(self, self.q_proj, self.kv_down)).split([hd * e, R], -1)
        q, c = q.reshape(N, hd, e), self.kv_norm(c, kx)  # [N, h, e], [N, R]
        spans, rows, key_start = [], [], 0
        for grp, past in zip(groups, states, strict=True):
            for i in range(grp.G):
                start = grp.start + i * grp.T
                L = past[i].shape[0] if past is not None else 0
                n = key_rows(L + grp.T)
                if past is not None and L:
                    rows.append(past[i])
                rows.append(c[start : start + grp.T])
                if n > L + grp.T:
                    rows.append(c.new_zeros(n - L - grp.T, R))
                spans.append(Span(start=start, T=grp.T, past=L, key_start=key_start))
                key_start += n
        latents = torch.cat(rows)  # [S_total, R]: every span's keys, zero rows to whole blocks
        kv = kx.linear(latents, fused(self, self.k_up, self.v_up))  # [S_total, 2 h e]
        keys, values = (x.reshape(-1, hd, e) for x in kv.split(hd * e, -1))  # [S_total, h, e]
        with timed("attention"):
            y = attend(q, keys, values, spans, kx).reshape(N, hd * e)
        new = [c[grp.rows].view(grp.G, grp.T, R).detach() for grp in groups]
        return kx.linear(y, self.o_proj.weight), new

    def forward(self, x: torch.Tensor, state: MLAState | None = None,
                kx: Kernels = INVARIANT) -> torch.Tensor:
        """x [B, T, D] -> [B, T, D]; appends T latents to state when given."""
        B, T, D = x.shape
        grp = GroupView(start=0, G=B, T=T, recurrent=False)
        past = list(state.latent.unbind(0)) if state is not None else None
        y, (new,) = self.forward_groups(x.reshape(B * T, D), [grp], [past], kx)
        if state is not None:
            state.latent = torch.cat([state.latent, new], 1)  # [B, t + T, R]
        return y.view(B, T, D)

    def step(self, x: torch.Tensor, state: MLAState, kx: Kernels = INVARIANT) -> torch.Tensor:
        """x [B, 1, D] -> [B, 1, D]; appends one latent."""
        return self.forward(x, state, kx)
