"""The per-token working-set law: below which capacity LRU cannot hit decode-order routing.

Decode visits every MoE layer once per token, in order, and each layer gets its top-k distinct
experts. A key is a (layer, expert) pair, so keys of different layers never coincide. A key
token t used is used again, at the earliest, by token t + 1 at the same layer, and between the
two uses every other MoE layer requests its top-k keys: at least (layers - 1) x top-k distinct
other keys. LRU hits a request only when fewer than C distinct keys came in between, so no
capacity below `lru_cliff` = (layers - 1) x top-k + 1 can hit. The bound is tight whenever some
expert is last in its layer's order for one token and first for the next. A token's working set
is layers x top-k keys (`token_working_set`); neither number depends on the experts per layer.

`stack_distances` measures this on any trace (Mattson's LRU stack distance: distinct keys since
the key's previous use, plus one; 0 for a first use), and `lru_curve` turns it into LRU's hit
rate at every capacity in one pass: a request hits a cache of C slots exactly when its distance
is 1..C. Oracle: `replay(trace, C, "lru")` at every C (tests/core/experts/test_working_set.py).
"""

from __future__ import annotations

import numpy as np

from core.errors import check_int
from core.experts.policies import trace_keys


def token_working_set(moe_layers: int, topk: int) -> int:
    """Keys one decoded token requests: every MoE layer's top-k."""
    return check_int("moe_layers", moe_layers, 1) * check_int("topk", topk, 1)


def lru_cliff(moe_layers: int, topk: int) -> int:
    """Smallest capacity at which LRU can hit decode-order routing: (layers - 1) x top-k + 1."""
    return token_working_set(moe_layers, topk) - check_int("topk", topk, 1) + 1


def stack_distances(trace: np.ndarray) -> np.ndarray:
    """LRU stack distance of each request of a (n, 2) trace: (n,) int64, 0 for a first use.

    A Fenwick tree over request positions marks each key's latest use; the distinct keys
    between a request and its key's previous use are the marks strictly between them.
    """
    keys = trace_keys(trace).tolist()
    n = len(keys)
    tree = [0] * (n + 1)  # Fenwick tree, 1-based: marks at each key's latest position

    def add(i: int, v: int) -> None:
        i += 1
        while i <= n:
            tree[i] += v
            i += i & -i

    def upto(i: int) -> int:  # marks at positions 0..i-1
        s = 0
        while i > 0:
            s += tree[i]
            i -= i & -i
        return s

    last: dict[int, int] = {}
    out = np.zeros(n, np.int64)
    for i, k in enumerate(keys):
        p = last.get(k)
        if p is not None:
            out[i] = upto(i) - upto(p + 1) + 1
            add(p, -1)
        add(i, 1)
        last[k] = i
    return out


def lru_curve(trace: np.ndarray, capacities: list[int] | np.ndarray) -> np.ndarray:
    """LRU hit rate at each capacity, from stack distances: (len(capacities),) float64."""
    caps = [check_int("capacity", int(c), 1) for c in capacities]
    d = stack_distances(trace)
    if not len(d):
        return np.zeros(len(caps), np.float64)
    reused = np.sort(d[d > 0])
    return np.searchsorted(reused, caps, side="right") / len(d)
