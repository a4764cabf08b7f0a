"""Cache policies replayed offline: hits, misses and evictions of a (layer, expert) trace at any
capacity (policy replay; speculative decoding's replay lives in core.speculative).

Policies: "lru" (what the live cache does; counter for counter equal to ExpertCache over the
same gets), "lfu" (evict the fewest requests so far, counts kept across evictions, ties to the
least recently used) and "belady" (evict the key used furthest in the future: the optimum for
a cache that must admit every miss; replay only, because it reads the future).
Each policy has a slow `naive_replay` twin that tests compare against.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from core.errors import ParamError, check_choice, check_int

POLICIES = ("lru", "lfu", "belady")


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayResult:
    policy: str
    capacity: int
    requests: int
    hits: int
    misses: int
    evictions: int

    @property
    def hit_rate(self) -> float:
        return self.hits / self.requests if self.requests else 0.0


def trace_keys(trace: np.ndarray) -> np.ndarray:
    """Dense ids 0..U-1 of the (layer, expert) pairs of a (n, 2) trace: (n,) int64."""
    a = np.asarray(trace)
    if a.ndim != 2 or a.shape[1] != 2 or not np.issubdtype(a.dtype, np.integer):
        raise ParamError(f"trace must be an (n, 2) integer array, got {a.dtype} {a.shape}")
    if a.size and a.min() < 0:
        raise ParamError("trace must hold non-negative (layer, expert) pairs")
    if not len(a):
        return np.zeros(0, np.int64)
    packed = a[:, 0].astype(np.int64) * (int(a[:, 1].max()) + 1) + a[:, 1]
    return np.unique(packed, return_inverse=True)[1].reshape(-1).astype(np.int64)


def next_use(keys: np.ndarray) -> np.ndarray:
    """Index of each request's next request of the same key, len(keys) if none: (n,) int64."""
    n = len(keys)
    order = np.argsort(keys, kind="stable")  # equal keys stay in request order
    sk = keys[order]
    nxt = np.full(n, n, np.int64)
    same = sk[1:] == sk[:-1]
    nxt[order[:-1][same]] = order[1:][same]
    return nxt


def compulsory_ceiling(trace: np.ndarray) -> float:
    """Best hit rate any cache can reach: 1 - distinct keys / requests."""
    keys = trace_keys(trace)
    return 1.0 - len(np.unique(keys)) / len(keys) if len(keys) else 0.0


def replay(trace: np.ndarray, capacity: int, policy: str = "lru") -> ReplayResult:
    """Replay a (n, 2) trace of gets through a cache of `capacity` experts."""
    capacity = check_int("capacity", capacity, 1)
    check_choice("policy", policy, POLICIES)
    keys = trace_keys(trace)
    if policy == "lru":
        hits, ev = _lru(keys.tolist(), capacity)
    elif policy == "lfu":
        hits, ev = _lfu(keys.tolist(), capacity)
    else:
        hits, ev = _belady(keys.tolist(), next_use(keys).tolist(), capacity)
    n = len(keys)
    return ReplayResult(policy=policy, capacity=capacity, requests=n, hits=hits, misses=n - hits,
                        evictions=ev)


def hit_rate_curve(
    trace: np.ndarray, capacities: list[int], policies: tuple[str, ...] = POLICIES
) -> dict[str, np.ndarray]:
    """Hit rate per policy at each capacity: {policy: (len(capacities),) float64}."""
    return {
        p: np.array([replay(trace, c, p).hit_rate for c in capacities], np.float64)
        for p in policies
    }


def _lru(keys: list[int], cap: int) -> tuple[int, int]:
    od: OrderedDict[int, None] = OrderedDict()
    move, pop = od.move_to_end, od.popitem
    hits = ev = 0
    for k in keys:
        if k in od:
            move(k)
            hits += 1
        else:
            if len(od) >= cap:
                pop(last=False)
                ev += 1
            od[k] = None
    return hits, ev


def _lfu(keys: list[int], cap: int) -> tuple[int, int]:
    count: dict[int, int] = {}
    last: dict[int, int] = {}
    resident: set[int] = set()
    heap: list[tuple[int, int, int]] = []  # (count, last use, key); stale entries skipped
    hits = ev = 0
    for i, k in enumerate(keys):
        count[k] = count.get(k, 0) + 1
        last[k] = i
        if k in resident:
            hits += 1
        else:
            if len(resident) >= cap:
                while True:
                    c, t, v = heapq.heappop(heap)
                    if v in resident and count[v] == c and last[v] == t:
                        break
                resident.discard(v)
                ev += 1
            resident.add(k)
        heapq.heappush(heap, (count[k], i, k))
    return hits, ev


def _belady(keys: list[int], nxt: list[int], cap: int) -> tuple[int, int]:
    cur: dict[int, int] = {}  # resident key -> its next use
    heap: list[tuple[int, int]] = []  # (-next use, key); stale entries skipped
    hits = ev = 0
    for i, k in enumerate(keys):
        if k in cur:
            hits += 1
        elif len(cur) >= cap:
            while True:
                neg, v = heapq.heappop(heap)
                if cur.get(v) == -neg:
                    break
            del cur[v]
            ev += 1
        cur[k] = nxt[i]
        heapq.heappush(heap, (-nxt[i], k))
    return hits, ev


def naive_replay(trace: np.ndarray, capacity: int, policy: str = "lru") -> ReplayResult:
    """The whiteboard version of `replay`: O(capacity) or O(n) work per request."""
    capacity = check_int("capacity", capacity, 1)
    check_choice("policy", policy, POLICIES)
    keys = trace_keys(trace).tolist()
    cache: list[int] = []  # LRU: least recent first
    count: dict[int, int] = {}
    last: dict[int, int] = {}
    hits = ev = 0
    for i, k in enumerate(keys):
        count[k] = count.get(k, 0) + 1
        last[k] = i
        if k in cache:
            hits += 1
            if policy == "lru":
                cache.remove(k)
                cache.append(k)
            continue
        if len(cache) >= capacity:
            if policy == "lru":
                victim = cache[0]
            elif policy == "lfu":
                victim = min(cache, key=lambda v: (count[v], last[v]))
            else:
                victim = max(cache, key=lambda v: _naive_next(keys, i, v))
            cache.remove(victim)
            ev += 1
        cache.append(k)
    return ReplayResult(policy=policy, capacity=capacity, requests=len(keys), hits=hits,
                        misses=len(keys) - hits, evictions=ev)


def _naive_next(keys: list[int], i: int, v: int) -> int:
    for j in range(i + 1, len(keys)):
        if keys[j] == v:
            return j
    return len(keys)
