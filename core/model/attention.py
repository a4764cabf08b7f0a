"""Causal attention over ragged sequences: every query sees exactly the keys before it.

`attend(q, keys, values, spans, kernels)` answers the queries of many sequences at once. A
Span is one sequence's slice of the batch: its T query rows from `start`, the position of its
first query (`past`, the tokens already in its cache) and where its keys begin in `keys`
[S_total, h, e] (past + new tokens, then zero rows up to a multiple of BLOCK: `key_rows`).
Query t of a span sits at position past + t and attends keys 0 .. past + t.

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
    """Rows a span's keys take in `keys`: its tokens rounded up to whole blocks."""
    return BLOCK * -(-tokens // BLOCK)


@dataclass(frozen=True, slots=True)
class Span:
    """One sequence's queries: rows [start, start + T) of q at positions [past, past + T);
    its keys are rows [key_start, key_start + key_rows(past + T)) of keys and values."""

    start: int
    T: int
    past: int
    key_start: int


def _bucket(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
            tasks: list[tuple[Span, int, int]], S: int, kx: Kernels, out: torch.Tensor) -> None:
    """Tasks (span, first query, query count) over key rows of length S; answers go to out."""
    N, h, e = q.shape
    G, n = len(tasks), max(c for _, _, c in tasks)
    q_rows, pos, k_rows = [], [], []
    for sp, t0, c in tasks:
        q_rows += list(range(sp.start + t0, sp.start + t0 + c)) + [N] * (n - c)  # N: a zero row
        p0 = sp.past + t0
        pos += list(range(p0, p0 + c)) + [S - 1] * (n - c)  # padded rows see every key
        k_rows.append(sp.key_start)
    qi = torch.tensor(q_rows).view(G, n)
    Q = torch.cat([q, q.new_zeros(1, h, e)])[qi]  # [G, n, h, e]
    ki = (torch.tensor(k_rows).view(G, 1) + torch.arange(S)).clamp_(max=keys.shape[0] - 1)
    K, V = keys[ki], values[ki]  # [G, S, h, e]
    Qb = Q.permute(0, 2, 1, 3).reshape(G * h, n, e)  # [G h, n, e]
    Kb = K.permute(0, 2, 3, 1).reshape(G * h, e, S)  # [G h, e, S]
    Vb = V.permute(0, 2, 1, 3).reshape(G * h, S, e)  # [G h, S, e]
    att = kx.bmm(Qb, Kb).view(G, h, n, S) / math.sqrt(e)  # [G, h, n, S]
    hidden = torch.arange(S) > torch.tensor(pos).view(G, 1, n, 1)  # [G, 1, n, S]
    att = att.masked_fill(hidden, float("-inf")).softmax(-1)
    y = kx.bmm(att.reshape(G * h, n, S), Vb).view(G, h, n, e).transpose(1, 2)  # [G, n, h, e]
    keep = qi.view(-1) < N
    out.index_put_((qi.view(-1)[keep],), y.reshape(G * n, h, e)[keep])


def attend(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, spans: Sequence[Span],
           kx: Kernels) -> torch.Tensor:
    """q [N, h, e] (every span's rows), keys / values [S_total, h, e] -> [N, h, e]."""
    out = q.new_zeros(q.shape)
    buckets: dict[int, list[tuple[Span, int, int]]] = {}
    if kx.invariant:
        for sp in spans:
            t = 0
            while t < sp.T:
                p = sp.past + t
                end = BLOCK * (p // BLOCK + 1)  # the key row of p's block
                c = min(sp.T - t, end - p)
                buckets.setdefault(end, []).append((sp, t, c))
                t += c
    else:
        by_count: dict[int, list[Span]] = {}
        for sp in spans:
            by_count.setdefault(sp.T, []).append(sp)
        for group in by_count.values():
            S = max(sp.past + sp.T for sp in group)
            _bucket(q, keys, values, [(sp, 0, sp.T) for sp in group], S, kx, out)
        return out
    for S, tasks in buckets.items():
        _bucket(q, keys, values, tasks, S, kx, out)
    return out
