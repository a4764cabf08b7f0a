"""The token mixers: RMSNorm, a KDA layer (core/kda/) and an MLA layer with a latent KV cache.

Each mixer has a full-sequence `forward(x, state)` (prefill; state None for training) and a
one-token `step(x_t, state)` (decode). States are small per-sequence objects owned by
DecodeState (core/model/model.py); both paths read and write them in the same way, so a
prefill followed by steps equals steps all the way (to float32 rounding).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F

from core.kda import kda_chunked, kda_chunked_states, kda_gate, kda_step
from core.kda.differentiable import kda_chunked_autograd
from core.model.config import ModelDims


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


@dataclass(slots=True)
class KDAState:
    conv: torch.Tensor  # [B, conv_size - 1, 3 * C]: last pre-conv q|k|v inputs
    S: torch.Tensor  # [B, H, K, V]: the delta-rule state
    # filled by a prefill asked to capture: the state after each requested position (a copy)
    captured: list[KDAState] = field(default_factory=list)


@dataclass(slots=True)
class MLAState:
    latent: torch.Tensor  # [B, t, R]: normalised KV latents of every past token


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

    def _heads(self, x: torch.Tensor, mixed: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """x [B, T, D], mixed [B, T, 3C] (post-conv) -> q, k, v, g [B, T, H, K], beta [B, T, H]."""
        d = self.d
        B, T, _ = x.shape
        q, k, v = mixed.view(B, T, 3, d.kda_heads, d.kda_head_dim).unbind(2)  # [B, T, H, K]
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        z = self.f_up(self.f_down(x)).view(B, T, d.kda_heads, d.kda_head_dim)  # [B, T, H, K]
        g = kda_gate(z, self.A_log, self.dt_bias, "lowerbound", d.gate_lower_bound)
        beta = torch.sigmoid(self.b_proj(x))  # [B, T, H]
        return q, k, v, g, beta

    def _out(self, x: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
        """x [B, T, D], o [B, T, H, V] -> [B, T, D] through the sigmoid-gated RMSNorm."""
        B, T = x.shape[:2]
        gate = torch.sigmoid(self.g_up(self.g_down(x)))  # [B, T, C]
        return self.o_proj(self.o_norm(o).reshape(B, T, -1) * gate)

    def forward(self, x: torch.Tensor, state: KDAState | None = None,
                capture_at: tuple[int, ...] = ()) -> torch.Tensor:
        """x [B, T, D] -> [B, T, D]; updates state (conv tail, S) in place when given.

        capture_at: positions in this call (multiples of the KDA chunk, 64) after which the
        state is copied into state.captured; free, and bit-identical outputs either way.
        """
        B, T, _ = x.shape
        k_conv = self.d.conv_size
        raw = self.qkv_proj(x)  # [B, T, 3C]
        tail = state.conv if state is not None else raw.new_zeros(B, k_conv - 1, raw.shape[-1])
        padded = torch.cat([tail, raw], 1)  # [B, T + k - 1, 3C]
        mixed = F.silu(F.conv1d(padded.transpose(1, 2), self.conv.unsqueeze(1),
                                groups=raw.shape[-1]).transpose(1, 2))  # [B, T, 3C]
        q, k, v, g, beta = self._heads(x, mixed)
        S0 = state.S if state is not None else None
        if torch.is_grad_enabled():  # NOTE: kda_chunked writes with out=: no autograd
            o, S = kda_chunked_autograd(q, k, v, g, beta, initial_state=S0)  # [B, T, H, V]
        elif capture_at:  # prefix checkpoints: the same arithmetic as kda_chunked
            o, S, at = kda_chunked_states(q, k, v, g, beta, capture_at, initial_state=S0)
            state.captured = [KDAState(padded[:, p : p + k_conv - 1].clone(), s_p)
                              for p, s_p in zip(capture_at, at, strict=True)]
        else:  # NOTE: inference stays on kda_chunked, bit for bit what the weights shipped with
            o, S = kda_chunked(q, k, v, g, beta, initial_state=S0)  # [B, T, H, V]
        if state is not None:
            state.conv, state.S = padded[:, -(k_conv - 1):].detach(), S.detach()
        return self._out(x, o)

    def step(self, x: torch.Tensor, state: KDAState) -> torch.Tensor:
        """x [B, 1, D] -> [B, 1, D] with kda_step; updates state in place."""
        raw = self.qkv_proj(x)  # [B, 1, 3C]
        window = torch.cat([state.conv, raw], 1)  # [B, k, 3C]
        mixed = F.silu((window * self.conv.t().unsqueeze(0)).sum(1, keepdim=True))  # [B, 1, 3C]
        q, k, v, g, beta = self._heads(x, mixed)
        o, state.S = kda_step(q[:, 0], k[:, 0], v[:, 0], g[:, 0], beta[:, 0], state.S)
        state.conv = window[:, 1:]
        return self._out(x, o.unsqueeze(1))


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

    def _attend(self, x: torch.Tensor, latent: torch.Tensor, causal: bool) -> torch.Tensor:
        """x [B, T, D] queries over latent [B, S, R] (the last T positions are x's) -> [B, T, D]."""
        d = self.d
        B, T, _ = x.shape
        S = latent.shape[1]
        q = self.q_proj(x).view(B, T, d.mla_heads, d.mla_head_dim).transpose(1, 2)  # [B, h, T, e]
        k = self.k_up(latent).view(B, S, d.mla_heads, d.mla_head_dim).transpose(1, 2)  # [B,h,S,e]
        v = self.v_up(latent).view(B, S, d.mla_heads, d.mla_head_dim).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d.mla_head_dim)  # [B, h, T, S]
        if causal:
            mask = torch.ones(T, S, dtype=torch.bool).tril(S - T)  # query i sees keys <= S-T+i
            att = att.masked_fill(~mask, float("-inf"))
        y = att.softmax(-1) @ v  # [B, h, T, e]
        return self.o_proj(y.transpose(1, 2).reshape(B, T, -1))

    def forward(self, x: torch.Tensor, state: MLAState | None = None) -> torch.Tensor:
        """x [B, T, D] -> [B, T, D]; appends T latents to state when given."""
        c = self.kv_norm(self.kv_down(x))  # [B, T, R]
        if state is not None:
            c = torch.cat([state.latent, c], 1)  # [B, t + T, R]
            state.latent = c.detach()
        return self._attend(x, c, causal=True)

    def step(self, x: torch.Tensor, state: MLAState) -> torch.Tensor:
        """x [B, 1, D] -> [B, 1, D]; appends one latent."""
        state.latent = torch.cat([state.latent, self.kv_norm(self.kv_down(x))], 1)  # [B, t+1, R]
        return self._attend(x, state.latent, causal=False)
