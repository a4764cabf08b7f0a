"""A warm cache state that every arm of an A/B starts from: capture it once, rebuild it exactly.

A/B hygiene (reference sections 4 and 12): substitution keeps residents resident, so an arm
run after another inherits the residency the other one learned. `capture` records the READY
experts in LRU order (oldest first); `restore` rebuilds that state on a fresh ExpertCache of
the same capacity with plain gets in that order, then opens a new stats window. LRU decisions
depend only on the order of last use, so every later get, batch and eviction behaves as in
the captured cache. Restored experts count as demand-loaded (resident, no prefetch pending).
`warm_up` makes the state: stock decoding of some text, one byte at a time, through the cache.
"""

from __future__ import annotations

from pathlib import Path

import torch

from core.errors import ParamError
from core.experts import ExpertCache
from core.model.model import HybridLM
from core.model.providers import CacheProvider, open_cache

WarmState = tuple[tuple[int, int], ...]  # (layer, expert), least recently used first


def capture(cache: ExpertCache) -> WarmState:
    """The resident experts of `cache`, least recently used first."""
    ready = [s for s in cache.snapshot().slots if s.state == "READY"]
    return tuple((s.layer, s.expert) for s in sorted(ready, key=lambda s: s.used_at))


def restore(directory: str | Path, model: HybridLM, capacity: int, state: WarmState
            ) -> ExpertCache:
    """A new cache of `capacity` slots holding `state` in the same LRU order, stats reset."""
    if len(state) > capacity:
        raise ParamError(f"state holds {len(state)} experts, more than capacity {capacity}")
    cache = open_cache(directory, model.dims, capacity)
    for i, (layer, expert) in enumerate(state):
        if i % cache.topk == 0:
            cache.begin_layer()  # leases only guard views in use; these are not
        cache.get(layer, expert)
    cache.begin_layer()
    cache.reset_stats()
    return cache


@torch.no_grad()
def warm_up(directory: str | Path, model: HybridLM, capacity: int, text: bytes) -> WarmState:
    """The state a cache of `capacity` slots is left in by stock decoding of `text`."""
    with open_cache(directory, model.dims, capacity) as cache:
        provider = CacheProvider(cache)
        state = model.new_state(1)
        for b in text:
            model.step(torch.tensor([b]), state, provider)
        return capture(cache)
