"""The MLA layer: multi-head latent attention over a cache of R-wide latents (no RoPE).

Per token, kv_down and an RMSNorm give the latent c [R] that the cache keeps (R floats a token
a layer, the whole of MLA's KV cache). Keys and values are k_h = W_k,h c and v_h = W_v,h c;
attention uses the absorbed form (core/model/attention.py): the query is folded through W_k,h
(qa_h = W_k,h^T q_h), scored against the latents, and the attention-weighted latents are
lifted once through W_v,h, so no key or value is ever materialised. Rows of a ragged batch
(prefill chunks, decode steps, verify windows of many sequences) share every projection;
`forward_groups` returns the T new latents of each group for the caller to commit.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn as nn

from core.model.attention import Span, attend, key_rows
from core.model.clock import timed
from core.model.config import ModelDims
from core.model.kernels import INVARIANT, Kernels, fused
from core.model.layers import GroupView, MLAState, RMSNorm


class MLA(nn.Module):
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
        c = self.kv_norm(c, kx)  # [N, R]: the new latents
        spans, rows, key_start = [], [], 0
        for grp, past in zip(groups, states, strict=True):
            for i in range(grp.G):
                start = grp.start + i * grp.T
                L = past[i].shape[0] if past is not None else 0
                n = key_rows(L + grp.T)
                if L:
                    rows.append(past[i])
                rows.append(c[start : start + grp.T])
                if n > L + grp.T:
                    rows.append(c.new_zeros(n - L - grp.T, R))
                spans.append(Span(start=start, T=grp.T, past=L, key_start=key_start))
                key_start += n
        latents = torch.cat(rows)  # [S_total, R]: every span's latents, zero rows to whole blocks
        Wk = self.k_up.weight.view(hd, e, R)  # [h, e, R]
        Wv = self.v_up.weight.view(hd, e, R)
        qa = kx.bmm(q.reshape(N, hd, e).transpose(0, 1), Wk).transpose(0, 1)  # [N, h, R]
        with timed("attention"):
            z = attend(qa, latents, spans, e, kx)  # [N, h, R]
        y = kx.bmm(z.transpose(0, 1), Wv.transpose(1, 2)).transpose(0, 1)  # [N, h, e]
        new = [c[grp.rows].view(grp.G, grp.T, R).detach() for grp in groups]
        return kx.linear(y.reshape(N, hd * e), self.o_proj.weight), new

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
