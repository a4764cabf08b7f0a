"""CacheStats: one stats window of an ExpertCache, typed; `stats()` returns it, scenarios record it.

Stored fields are the counters of the window (upstream's, then the exact classification), the
gauges of the cache at the moment of the call, and two timings. Timings do not take part in
equality: two identical runs differ only in them. Derived figures are properties, so they can
never disagree with the counters they come from.

Upstream (kimi-k3-in-c v1.0.0) reports an aggregate "TRUE resident" rate
`max(hits - prefetch_reads, 0) / requests`. That subtraction is right only if every prefetch
is consumed exactly once, in the same window, before eviction; `aggregate_adjusted_hits` keeps
the unclamped value (a negative one is a signal) and `upstream_resident_hits` applies the clamp.

Demand batches (`get_many(..., demand=True)`: the experts a layer needs now, read in parallel)
are demand, not prefetch: their reads count in demand_batch_reads, never prefetch_reads, and the
first get of each member is a demand miss (demand_batch_misses, inside demand_misses and the
upstream misses), never a hit.

Invariants (every window), checked by `invariant_errors`:
  demand_requests == hits_resident + hits_prefetched + demand_misses
  prefetch_reads + warm_reads + carried_pending
      == hits_prefetched + prefetch_wasted + prefetch_pending
  evictions == prefetch_wasted + evicted_after_use + demand_batch_unused
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

DERIVED = (
    "requests", "load_seconds", "hit_rate_raw", "aggregate_adjusted_hits",
    "upstream_resident_hits", "aggregate_clamped", "true_resident_rate", "retention",
    "exact_resident_rate", "exact_prefetched_rate", "exact_miss_rate", "arena_bytes",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheStats:
    # upstream counters (compat mode: warm() moves hits/misses, as k3_cache_prefetch did)
    hits: int
    misses: int
    evictions: int
    bytes_read: int  # payload bytes of successful loads
    prefetch_reads: int  # get_many publishes
    # exact classification
    demand_requests: int  # get() calls in range
    hits_resident: int
    hits_prefetched: int  # first get of an expert loaded ahead of demand
    prefetch_consumed_cross_window: int
    demand_misses: int
    demand_reads: int
    warm_reads: int
    prefetch_wasted: int  # evicted before any get consumed it
    evicted_after_use: int
    demand_batch_reads: int  # get_many(demand=True) publishes
    demand_batch_misses: int  # first gets of demand-batch members (inside demand_misses)
    demand_batch_unused: int  # demand-batch members evicted before any get (a caller's bug)
    carried_pending: int  # unconsumed prefetches alive at reset_stats
    device_bytes: int  # bytes the reads transferred (aligned windows)
    wasted_bytes: int  # device bytes of wasted prefetches
    drops: int  # get() found nothing evictable
    failed_reads: int  # loads that did not publish (missing, oversize, short)
    prefetch_skipped: int  # distinct, non-resident batch ids left unread (nothing evictable)
    batch_ids_dropped: int  # not upstream: compat get_many ids ignored (range, past 64)
    # gauges at the time of the call
    prefetch_pending: int  # READY, loaded ahead, not yet consumed
    window: int  # index of this stats window (reset_stats calls so far)
    n_slots: int
    slot_bytes: int
    compat: str | None
    resident: int
    inflight: int
    pinned: int
    leased: int
    trace_dropped: int
    # timings: measured, never compared
    read_seconds: float = field(compare=False)  # serial loads, each read's own time
    batch_seconds: float = field(compare=False)  # get_many read phases, wall time

    @property
    def requests(self) -> int:
        """Upstream's requests: hits + misses (compat mode counts warm() here too)."""
        return self.hits + self.misses

    @property
    def load_seconds(self) -> float:
        return self.read_seconds + self.batch_seconds

    @property
    def hit_rate_raw(self) -> float:
        return _rate(self.hits, self.requests)

    @property
    def aggregate_adjusted_hits(self) -> int:
        """Upstream's `hits - prefetch_reads`, unclamped."""
        return self.hits - self.prefetch_reads

    @property
    def upstream_resident_hits(self) -> int:
        """Upstream's "TRUE resident" hits: the aggregate clamped at 0."""
        return max(self.aggregate_adjusted_hits, 0)

    @property
    def aggregate_clamped(self) -> bool:
        """Whether the clamp hid a negative aggregate."""
        return self.aggregate_adjusted_hits < 0

    @property
    def true_resident_rate(self) -> float:
        return _rate(self.upstream_resident_hits, self.requests)

    @property
    def retention(self) -> float:
        """Upstream's 1 - evictions / requests (0 for a window without requests)."""
        return 1.0 - _rate(self.evictions, self.requests) if self.requests else 0.0

    @property
    def exact_resident_rate(self) -> float:
        return _rate(self.hits_resident, self.demand_requests)

    @property
    def exact_prefetched_rate(self) -> float:
        return _rate(self.hits_prefetched, self.demand_requests)

    @property
    def exact_miss_rate(self) -> float:
        return _rate(self.demand_misses, self.demand_requests)

    @property
    def arena_bytes(self) -> int:
        return self.n_slots * self.slot_bytes

    def as_dict(self) -> dict[str, int | float | str | None]:
        """Every stored and derived figure by name (for printing and JSON)."""
        out: dict[str, int | float | str | None] = {
            f.name: getattr(self, f.name) for f in fields(self)
        }
        out.update({name: getattr(self, name) for name in DERIVED})
        return out


def _rate(num: int, den: int) -> float:
    return num / den if den else 0.0


def invariant_errors(s: CacheStats) -> list[str]:
    """The window invariants that do not hold (empty when the accounting is consistent)."""
    errs = []
    if s.demand_requests != s.hits_resident + s.hits_prefetched + s.demand_misses:
        errs.append("demand_requests != hits_resident + hits_prefetched + demand_misses")
    ahead = s.prefetch_reads + s.warm_reads + s.carried_pending
    if ahead != s.hits_prefetched + s.prefetch_wasted + s.prefetch_pending:
        errs.append(
            "prefetch_reads + warm_reads + carried_pending != "
            "hits_prefetched + prefetch_wasted + prefetch_pending"
        )
    if s.evictions != s.prefetch_wasted + s.evicted_after_use + s.demand_batch_unused:
        errs.append("evictions != prefetch_wasted + evicted_after_use + demand_batch_unused")
    return errs
