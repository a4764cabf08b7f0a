"""CacheStats: derived figures from hand-worked windows, and invariant_errors naming each break.

Pins the upstream aggregate and its clamp (reference section 12's mixed schedule: 24 hits, 26
prefetch reads), retention as upstream defines it (it can go negative), and that timings never
take part in equality (two identical runs differ only in them).
"""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

from core.experts import CacheStats, invariant_errors


def _stats(**kw: object) -> CacheStats:
    zero = {f.name: 0 for f in fields(CacheStats)}
    return CacheStats(**(zero | {"compat": None, "read_seconds": 0.0, "batch_seconds": 0.0} | kw))


# The battery's mixed schedule (reference section 10): 24 gets, each a prefetched hit; 26
# batch reads, 26 evictions after use; experts 0 and 1 re-read at e = 22 and left pending.
MIXED = _stats(hits=24, prefetch_reads=26, evictions=26, evicted_after_use=26,
               demand_requests=24, hits_prefetched=24, prefetch_pending=2, n_slots=8,
               slot_bytes=12_288)


class TestDerived:
    def test_mixed_schedule(self) -> None:
        """hits - prefetch_reads = -2: the clamp reports 0 resident hits and hides the sign."""
        s = MIXED
        assert (s.requests, s.aggregate_adjusted_hits, s.upstream_resident_hits) == (24, -2, 0)
        assert s.aggregate_clamped and s.true_resident_rate == 0.0
        assert (s.exact_resident_rate, s.exact_prefetched_rate, s.exact_miss_rate) == (0, 1, 0)
        assert s.retention == pytest.approx(1 - 26 / 24)  # upstream's retention goes negative
        assert s.arena_bytes == 98_304

    def test_altered_schedule(self) -> None:
        """Batch 0..3, get 0 four times: the aggregate says 0 resident, truly 3 of 4."""
        s = _stats(hits=4, prefetch_reads=4, demand_requests=4, hits_prefetched=1,
                   hits_resident=3, prefetch_pending=3)
        assert (s.aggregate_adjusted_hits, s.upstream_resident_hits) == (0, 0)
        assert not s.aggregate_clamped
        assert (s.hit_rate_raw, s.true_resident_rate, s.exact_resident_rate) == (1.0, 0.0, 0.75)
        assert s.retention == 1.0

    def test_no_prefetch_means_hits_are_resident(self) -> None:
        s = _stats(hits=3, misses=1, demand_requests=4, hits_resident=3, demand_misses=1)
        assert (s.upstream_resident_hits, s.true_resident_rate) == (3, 0.75)

    def test_empty_window_rates_are_zero(self) -> None:
        s = _stats()
        assert (s.hit_rate_raw, s.true_resident_rate, s.retention, s.exact_miss_rate) == \
            (0.0, 0.0, 0.0, 0.0)

    def test_timings_are_kept_but_never_compared(self) -> None:
        a = _stats(read_seconds=0.25, batch_seconds=0.5)
        b = _stats(read_seconds=9.0)
        assert a == b and hash(a) == hash(b)
        assert a.load_seconds == 0.75

    def test_as_dict_lists_stored_and_derived_figures(self) -> None:
        d = MIXED.as_dict()
        assert d["hits"] == 24 and d["aggregate_adjusted_hits"] == -2
        assert d["arena_bytes"] == 98_304 and d["compat"] is None
        assert {f.name for f in fields(CacheStats)} < set(d)


class TestInvariants:
    def test_consistent_window_has_no_errors(self) -> None:
        assert invariant_errors(MIXED) == []

    @pytest.mark.parametrize(("change", "names"), [
        ({"hits_resident": 1}, "demand_requests != hits_resident"),
        ({"demand_misses": 1}, "demand_requests != hits_resident"),
        ({"prefetch_pending": 3}, "prefetch_reads + warm_reads + carried_pending"),
        ({"warm_reads": 1}, "prefetch_reads + warm_reads + carried_pending"),
        ({"prefetch_wasted": 1}, "evictions != prefetch_wasted + evicted_after_use"),
    ])
    def test_each_break_is_named(self, change: dict, names: str) -> None:
        errs = invariant_errors(replace(MIXED, **change))
        assert any(e.startswith(names) for e in errs), errs
