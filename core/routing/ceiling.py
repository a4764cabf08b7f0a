"""Replay from a warm cache: LRU (what the live cache did) and Belady (its ceiling), per layer call.

The frontier's reference line: the best hit rate any eviction rule could reach on the stock
run's requests with the same capacity and the same starting contents. Requests come in
groups, one per layer call: the k experts a layer needs at once (CacheProvider's demand batch
then its gets). Within a group the live cache first protects the members already resident,
then loads the others (evicting non-members only), then gets each in order. Both replays
follow that order:
  lru     evict the least recently used non-member; equals the live ExpertCache hit for hit
          (the oracle test), which is what makes the Belady line comparable to it
  belady  evict the non-member whose next use is furthest away (never used again: furthest;
          ties to the lower key): the optimum for a demand-paged cache, because it reads the
          future. Routing can beat it: it changes the requests. So can prefetch: it loads
          before the request.
A state is the resident keys, least recently used first (core.routing.warm_state.WarmState).
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Sequence

from core.errors import ParamError, check_choice, check_int

Key = tuple[int, int]  # (layer, expert)
REPLAYS = ("lru", "belady")


def _groups(requests: Sequence[Key], k: int) -> list[tuple[Key, ...]]:
    if len(requests) % k:
        raise ParamError(f"requests must come in groups of k = {k}, got {len(requests)}")
    groups = [tuple(requests[i : i + k]) for i in range(0, len(requests), k)]
    for g in groups:
        if len(set(g)) != k or len({layer for layer, _ in g}) != 1:
            raise ParamError(f"a group must be k distinct experts of one layer, got {g}")
    return groups


def replay_hits(state: Sequence[Key], requests: Sequence[Key], capacity: int, k: int,
                policy: str = "lru") -> int:
    """Hits of `requests` (groups of k, one per layer call) from a cache holding `state`."""
    check_choice("policy", policy, REPLAYS)
    capacity = check_int("capacity", capacity, k)
    if len(state) > capacity:
        raise ParamError(f"state holds {len(state)} experts, more than capacity {capacity}")
    groups = _groups(list(requests), k)
    if policy == "lru":
        return _lru(state, groups, capacity)
    return _belady(state, groups, capacity)


def _lru(state: Sequence[Key], groups: list[tuple[Key, ...]], capacity: int) -> int:
    od: OrderedDict[Key, None] = OrderedDict((key, None) for key in state)
    hits = 0
    for g in groups:
        for key in g:  # resident members are protected (stamped) first
            if key in od:
                od.move_to_end(key)
                hits += 1
        for key in g:
            if key not in od:
                if len(od) >= capacity:
                    victim = next(v for v in od if v not in g)
                    del od[victim]
                od[key] = None
        for key in g:  # the gets, in order
            od.move_to_end(key)
    return hits


def _belady(state: Sequence[Key], groups: list[tuple[Key, ...]], capacity: int) -> int:
    uses: dict[Key, list[int]] = {}  # key -> the groups that use it, ascending
    for i, g in enumerate(groups):
        for key in g:
            uses.setdefault(key, []).append(i)
    never = len(groups)

    def next_use(key: Key, i: int) -> int:
        at = uses.get(key, [])
        j = bisect.bisect_right(at, i)
        return at[j] if j < len(at) else never

    cur = set(state)
    hits = 0
    for i, g in enumerate(groups):
        hits += sum(key in cur for key in g)
        for key in g:
            if key not in cur:
                if len(cur) >= capacity:  # furthest next use; ties to the lower key
                    victim = max((v for v in cur if v not in g),
                                 key=lambda v: (next_use(v, i), -v[0], -v[1]))
                    cur.discard(victim)
                cur.add(key)
    return hits
