"""Counters of one stats window: the upstream figures and the exact, per-event classification.

Upstream (kimi-k3-in-c v1.0.0) counts hits, misses, evictions, bytes_read, prefetch_reads and
reports an aggregate "TRUE resident" rate `max(hits - prefetch_reads, 0) / requests`. That
subtraction is right only if every prefetch is consumed exactly once, in the same window,
before eviction. The exact counters classify each hit and eviction when it happens instead.

Invariants (every window):
  demand_requests == hits_resident + hits_prefetched + demand_misses
  prefetch_reads + warm_reads + carried_pending
      == hits_prefetched + prefetch_wasted + prefetch_pending
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from core.experts.slots import DEMAND, SlotTable


@dataclass(slots=True)
class Counters:
    # upstream counters (in compat mode warm() moves hits/misses, as k3_cache_prefetch did)
    hits: int = 0
    misses: int = 0
    evictions: int = 0
    bytes_read: int = 0  # payload bytes of successful loads
    prefetch_reads: int = 0  # get_many publishes
    # exact classification
    demand_requests: int = 0  # get() calls in range
    hits_resident: int = 0
    hits_prefetched: int = 0  # first get of an expert loaded ahead of demand
    prefetch_consumed_cross_window: int = 0
    demand_misses: int = 0
    demand_reads: int = 0
    warm_reads: int = 0
    prefetch_wasted: int = 0  # evicted before any get consumed it
    evicted_after_use: int = 0
    carried_pending: int = 0  # unconsumed prefetches alive at reset_stats
    device_bytes: int = 0  # bytes the reads transferred (aligned windows)
    wasted_bytes: int = 0  # device bytes of wasted prefetches
    drops: int = 0  # get() found nothing evictable
    failed_reads: int = 0  # loads that did not publish (missing, oversize, short)
    prefetch_skipped: int = 0  # distinct, non-resident batch ids left unread (nothing evictable)
    batch_ids_dropped: int = 0  # not upstream: compat get_many ids ignored (range, past 64)
    read_seconds: float = 0.0  # serial loads, each read's own time
    batch_seconds: float = 0.0  # get_many read phases, wall time


class Accountant:
    """Moves the counters of the current window; classification reads the slot table."""

    def __init__(self, table: SlotTable, compat: bool) -> None:
        self.table = table
        self.compat = compat
        self.c = Counters()
        self.window = 0

    def hit(self, s: int) -> str:
        c, t = self.c, self.table
        c.hits += 1
        c.demand_requests += 1
        if t.origin[s] != DEMAND and not t.consumed[s]:
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
        if t.origin[s] != DEMAND and not t.consumed[s]:
            c.prefetch_wasted += 1
            c.wasted_bytes += t.device[s]
            return True
        c.evicted_after_use += 1
        return False

    def loaded(self, s: int, origin: str, payload: int, device: int) -> None:
        c, t = self.c, self.table
        t.payload[s], t.device[s] = payload, device
        c.bytes_read += payload
        c.device_bytes += device
        if origin == DEMAND:
            c.demand_reads += 1
        elif origin == "prefetch":
            c.prefetch_reads += 1
        else:
            c.warm_reads += 1

    def reset(self) -> None:
        self.c = Counters(carried_pending=self.table.pending_prefetches())
        self.window += 1

    def stats(self, gauges: dict[str, object]) -> dict[str, object]:
        c = self.c
        out: dict[str, object] = {f.name: getattr(c, f.name) for f in fields(c)}
        requests = c.hits + c.misses
        adjusted = c.hits - c.prefetch_reads
        out.update(
            requests=requests,
            payload_bytes=c.bytes_read,
            load_seconds=c.read_seconds + c.batch_seconds,
            hit_rate_raw=_rate(c.hits, requests),
            aggregate_adjusted_hits=adjusted,  # unclamped: a negative value is a signal
            true_resident_rate=_rate(max(adjusted, 0) if c.prefetch_reads else c.hits, requests),
            retention=1.0 - _rate(c.evictions, requests) if requests else 0.0,
            exact_resident_rate=_rate(c.hits_resident, c.demand_requests),
            exact_prefetched_rate=_rate(c.hits_prefetched, c.demand_requests),
            exact_miss_rate=_rate(c.demand_misses, c.demand_requests),
            prefetch_pending=self.table.pending_prefetches(),
            window=self.window,
        )
        out.update(gauges)
        return out


def _rate(num: int, den: int) -> float:
    return num / den if den else 0.0


def invariant_errors(stats: dict[str, object]) -> list[str]:
    """The window invariants that do not hold (empty when the accounting is consistent)."""
    s = stats
    errs = []
    if s["demand_requests"] != s["hits_resident"] + s["hits_prefetched"] + s["demand_misses"]:
        errs.append("demand_requests != hits_resident + hits_prefetched + demand_misses")
    ahead = s["prefetch_reads"] + s["warm_reads"] + s["carried_pending"]
    if ahead != s["hits_prefetched"] + s["prefetch_wasted"] + s["prefetch_pending"]:
        errs.append(
            "prefetch_reads + warm_reads + carried_pending != "
            "hits_prefetched + prefetch_wasted + prefetch_pending"
        )
    if s["evictions"] != s["prefetch_wasted"] + s["evicted_after_use"]:
        errs.append("evictions != prefetch_wasted + evicted_after_use")
    return errs
