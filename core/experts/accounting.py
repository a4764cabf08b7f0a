"""Counters of one stats window: the upstream figures and the exact, per-event classification.

Upstream (kimi-k3-in-c v1.0.0) counts hits, misses, evictions, bytes_read and prefetch_reads;
the exact counters classify each hit and eviction when it happens instead of correcting by
subtraction. `Accountant.stats` freezes the window into a CacheStats (core.experts.stats, which
also states the invariants).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from core.experts.slots import AHEAD, DEMAND, DEMAND_BATCH, PREFETCH, SlotTable
from core.experts.stats import CacheStats


@dataclass(slots=True, kw_only=True)
class Counters:
    """The live counters of a window; each is documented where it is read, on CacheStats."""

    hits: int = 0
    misses: int = 0
    evictions: int = 0
    bytes_read: int = 0
    prefetch_reads: int = 0
    demand_requests: int = 0
    hits_resident: int = 0
    hits_prefetched: int = 0
    prefetch_consumed_cross_window: int = 0
    demand_misses: int = 0
    demand_reads: int = 0
    warm_reads: int = 0
    prefetch_wasted: int = 0
    evicted_after_use: int = 0
    demand_batch_reads: int = 0
    demand_batch_misses: int = 0
    demand_batch_unused: int = 0
    carried_pending: int = 0
    device_bytes: int = 0
    wasted_bytes: int = 0
    drops: int = 0
    failed_reads: int = 0
    prefetch_skipped: int = 0
    batch_ids_dropped: int = 0
    read_seconds: float = 0.0
    batch_seconds: float = 0.0


class Accountant:
    """Moves the counters of the current window; classification reads the slot table."""

    def __init__(self, table: SlotTable, compat: bool) -> None:
        self.table = table
        self.compat = compat
        self.c = Counters()
        self.window = 0

    def hit(self, s: int) -> str:
        """A get() that found slot s READY: a resident or prefetched hit, or (the first get of
        a demand-batch member) a demand miss whose read was batched. Returns the event op."""
        c, t = self.c, self.table
        c.demand_requests += 1
        if t.origin[s] == DEMAND_BATCH and not t.consumed[s]:
            t.consumed[s] = True
            c.misses += 1
            c.demand_misses += 1
            c.demand_batch_misses += 1
            return "miss"
        c.hits += 1
        if t.origin[s] in AHEAD and not t.consumed[s]:
            t.consumed[s] = True
            c.hits_prefetched += 1
            if t.window[s] < self.window:
                c.prefetch_consumed_cross_window += 1
            return "hit_prefetched"
        c.hits_resident += 1
        return "hit_resident"

    def miss(self) -> None:
        self.c.misses += 1
        self.c.demand_requests += 1
        self.c.demand_misses += 1

    def warm_request(self, resident: bool) -> None:
        """Upstream's k3_cache_prefetch went through admit(), so it counted a hit or a miss."""
        if self.compat:
            if resident:
                self.c.hits += 1
            else:
                self.c.misses += 1

    def evict(self, s: int) -> bool:
        """Count the eviction of READY slot s; returns True if it wasted a prefetch."""
        c, t = self.c, self.table
        c.evictions += 1
        if t.origin[s] in AHEAD and not t.consumed[s]:
            c.prefetch_wasted += 1
            c.wasted_bytes += t.device[s]
            return True
        if t.origin[s] == DEMAND_BATCH and not t.consumed[s]:
            c.demand_batch_unused += 1  # read for a layer that never asked for it
            return False
        c.evicted_after_use += 1
        return False

    def loaded(self, s: int, origin: str, payload: int, device: int) -> None:
        c, t = self.c, self.table
        t.payload[s], t.device[s] = payload, device
        c.bytes_read += payload
        c.device_bytes += device
        if origin == DEMAND:
            c.demand_reads += 1
        elif origin == DEMAND_BATCH:
            c.demand_batch_reads += 1
        elif origin == PREFETCH:
            c.prefetch_reads += 1
        else:
            c.warm_reads += 1

    def reset(self) -> None:
        self.c = Counters(carried_pending=self.table.pending_prefetches())
        self.window += 1

    def stats(self, **gauges: int | str | None) -> CacheStats:
        """The window so far, frozen, with the cache's gauges (keyword arguments)."""
        c = self.c
        counters = {f.name: getattr(c, f.name) for f in fields(c)}
        return CacheStats(**counters, prefetch_pending=self.table.pending_prefetches(),
                          window=self.window, **gauges)
