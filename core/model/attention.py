"""Causal latent attention over ragged sequences: every query sees exactly the keys before it.

MLA caches one R-wide latent c per token; keys and values are k = W_k c and v = W_v c per head.
With no RoPE the up-projections fold into the query and the output (DeepSeek's absorbed form):
q . k = (W_k^T q) . c, and sum_s a_s v_s = W_v (sum_s a_s c_s). So `attend(qa, latents, spans)`
scores absorbed queries qa [N, h, R] against the latents themselves and returns z [N, h, R]
(the attention-weighted latents per head); the caller applies W_v. Keys are never built: a
decode step reads R floats per past token, not 2 h e.

A Span is one sequence's slice of the batch: its T query rows from `start`, the position of its
first query (`past`, the tokens already in its cache) and where its latents begin in `latents`
[S_total, R] (past + new tokens, then zero rows up to a multiple of BLOCK: `key_rows`).
Query t of a span sits at position past + t and attends latents 0 .. past + t.

INVARIANT: a query's bits must not depend on how many other queries, or which, share its call,
nor on whether it is a prefill query or a decode step. So a query at position p attends over
the key row [0, BLOCK * (p // BLOCK + 1)): its own 64-token block and every block before, the
keys after p masked to -inf (and zero past the cache). Queries with the same key-row length,
from any sequence, form one bucket: one padded bmm for the scores, a row softmax, one bmm for
the outputs. A decode query at p = 100 and the query at p = 100 of a 200-token prefill
compute the same 128-key row with the same kernels, bit for bit.
FAST: one bucket per query count, key rows as long as the bucket's longest span (a row's bits
then depend on its neighbours' lengths).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from core.model.kernels import Kernels

BLOCK = 64  # the KDA chunk: prefill chunks and prefix blocks end on multiples of it


def key_rows(tokens: int) -> int:
    """Rows a span's latents take in `latents`: its tokens rounded up to whole blocks."""
    return BLOCK * -(-tokens // BLOCK)


@dataclass(frozen=True, slots=True)
class Span:
    """One sequence's queries: rows [start, start + T) of qa at positions [past, past + T);
    its latents are rows [key_start, key_start + key_rows(past + T)) of latents."""

    start: int
    T: int
    past: int
    key_start: int


def _bucket(qa: torch.Tensor, latents: torch.Tensor, tasks: list[tuple[Span, int, int]],
            S: int, scale: float, kx: Kernels, out: torch.Tensor) -> None:
    """Tasks (span, first query, query count) over key rows of length S; answers go to out."""
    N, h, R = qa.shape
    G, n = len(tasks), max(c for _, _, c in tasks)
    q_rows, pos, k_rows = [], [], []
    for sp, t0, c in tasks:
        r0, p0 = sp.start + t0, sp.past + t0
        q_rows += range(r0, r0 + c)
        pos += range(p0, p0 + c)
        if c < n:
            q_rows += [N] * (n - c)  # N: a zero row
            pos += [S - 1] * (n - c)  # padded rows see every key
        k_rows.append(sp.key_start)
    qi = torch.tensor(q_rows)
    padded = any(c < n for _, _, c in tasks)
    Q = (torch.cat([qa, qa.new_zeros(1, h, R)]) if padded else qa)[qi]  # [G n, h, R]
    Q = Q.view(G, n, h, R).transpose(1, 2).reshape(G, h * n, R)  # rows: (head, query)
    ki = (torch.tensor(k_rows).view(G, 1) + torch.arange(S)).clamp_(max=latents.shape[0] - 1)
    C = latents[ki]  # [G, S, R]
    att = kx.bmm(Q, C.transpose(1, 2)).view(G, h, n, S) / scale  # [G, h, n, S]
    hidden = torch.arange(S) > torch.tensor(pos).view(G, 1, n, 1)  # [G, 1, n, S]
    att = att.masked_fill(hidden, float("-inf")).softmax(-1)
    z = kx.bmm(att.view(G, h * n, S), C).view(G, h, n, R).transpose(1, 2)  # [G, n, h, R]
    keep = qi < N
    out.index_put_((qi[keep],), z.reshape(G * n, h, R)[keep])


def attend(qa: torch.Tensor, latents: torch.Tensor, spans: Sequence[Span], head_dim: int,
           kx: Kernels) -> torch.Tensor:
    """qa [N, h, R] (absorbed queries of every span), latents [S_total, R] -> z [N, h, R]."""
    out = qa.new_zeros(qa.shape)
    scale = math.sqrt(head_dim)
    if kx.invariant:
        buckets: dict[int, list[tuple[Span, int, int]]] = {}
        for sp in spans:
            t = 0
            while t < sp.T:
                p = sp.past + t
                end = BLOCK * (p // BLOCK + 1)  # the key row of p's block
                c = min(sp.T - t, end - p)
                buckets.setdefault(end, []).append((sp, t, c))
                t += c
        for S, tasks in buckets.items():
            _bucket(qa, latents, tasks, S, scale, kx, out)
        return out
    by_count: dict[int, list[Span]] = {}
    for sp in spans:
        by_count.setdefault(sp.T, []).append(sp)
    for group in by_count.values():
        S = max(sp.past + sp.T for sp in group)
        _bucket(qa, latents, [(sp, 0, sp.T) for sp in group], S, scale, kx, out)
    return out
