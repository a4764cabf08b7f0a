"""The seed's probes: when a hit is not reuse, and where the aggregate subtraction fails.

Upstream reports `max(hits - prefetch_reads, 0) / requests` as the "TRUE resident" rate. The
exact counters classify each hit when it happens (prefetched or resident), so they stay right
for schedules that do not consume every prefetch exactly once in the same window.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.experts import CacheStats, ExpertCache, ShardIndex, invariant_errors

from .conftest import BUDGET_8, Truth, assert_exact

BOTH = pytest.mark.parametrize("compat", ["k3-v1", None], ids=["compat", "fixed"])


def _cache(d: Path, compat, budget: int = BUDGET_8) -> ExpertCache:
    return ExpertCache(ShardIndex.open(d), 1, 24, 4, budget, compat=compat)


def _exact(s: CacheStats) -> tuple[int, int, int]:
    assert invariant_errors(s) == []
    return s.hits_prefetched, s.hits_resident, s.prefetch_pending


@BOTH
def test_prefetch_then_consume_then_again_then_reset(k3_dir: Path, k3_truth: Truth, compat):
    """Seed table: 0/4/6,528 -> 4 hits, adjusted 0 -> 8 hits, adjusted 4 -> reset: 4, 0, 0."""
    with _cache(k3_dir, compat) as c:
        assert c.get_many(0, [0, 1, 2, 3]) == 4
        s = c.stats()
        assert (s.requests, s.prefetch_reads, s.bytes_read) == (0, 4, 6_528)
        assert s.device_bytes == 20_480  # 5 pages of aligned windows for 6,528 payload
        assert len({x.slot for x in c.snapshot().slots if x.state == "READY"}) == 4
        assert _exact(s) == (0, 0, 4)

        for e in range(4):
            assert_exact(c.get(0, e), k3_truth, 0, e)
        s = c.stats()
        assert (s.hits, s.requests, s.aggregate_adjusted_hits) == (4, 4, 0)
        assert _exact(s) == (4, 0, 0)

        for e in range(4):
            c.get(0, e)
        s = c.stats()
        assert (s.hits, s.requests, s.aggregate_adjusted_hits) == (8, 8, 4)
        assert s.bytes_read == 6_528
        assert _exact(s) == (4, 4, 0)

        c.reset_stats()
        for e in range(4):
            c.get(0, e)
        s = c.stats()
        assert (s.hits, s.prefetch_reads, s.bytes_read) == (4, 0, 0)
        assert _exact(s) == (0, 4, 0) and s.carried_pending == 0


@BOTH
def test_altered_schedule_prefetch_four_get_zero_four_times(k3_dir: Path, compat) -> None:
    """hits 4, prefetch 4: the aggregate says 0 resident; truly 1 prefetched + 3 resident."""
    with _cache(k3_dir, compat) as c:
        c.get_many(0, [0, 1, 2, 3])
        for _ in range(4):
            c.get(0, 0)
        s = c.stats()
        assert (s.hits, s.prefetch_reads, s.bytes_read) == (4, 4, 6_528)
        assert max(s.aggregate_adjusted_hits, 0) == 0 and s.true_resident_rate == 0.0
        assert _exact(s) == (1, 3, 3)
        assert s.exact_resident_rate == 0.75


@BOTH
def test_prefetch_consumed_after_reset(k3_dir: Path, compat) -> None:
    """A prefetch consumed in the next window: the aggregate calls all 4 hits resident."""
    with _cache(k3_dir, compat) as c:
        c.get_many(0, [0, 1, 2, 3])
        c.reset_stats()
        for e in range(4):
            c.get(0, e)
        s = c.stats()
        assert (s.hits, s.prefetch_reads, s.aggregate_adjusted_hits) == (4, 0, 4)
        assert _exact(s) == (4, 0, 0)
        assert (s.carried_pending, s.prefetch_consumed_cross_window) == (4, 4)


@BOTH
def test_unconsumed_prefetch_evicted_is_waste(k3_dir: Path, compat) -> None:
    """A prefetch evicted before any get consumed it is counted as wasted, with its bytes."""
    with _cache(k3_dir, compat) as c:
        c.get_many(0, [0])
        for e in range(1, 9):  # 8 more demand loads push expert 0 out
            c.get(0, e)
            c.begin_layer()
        s = c.stats()
        assert (s.prefetch_wasted, s.wasted_bytes, s.prefetch_pending) == (1, 4_096, 0)
        assert invariant_errors(s) == []
        assert [e.op for e in c.events() if e.expert == 0][-2:] == ["evict", "waste"]


def test_warm_counts_a_request_only_in_compat(k3_dir: Path) -> None:
    """Upstream k3_cache_prefetch went through admit(): warm, warm, get count 1 miss + 2 hits,
    and the aggregate calls both hits resident. Truly: one prefetched hit, no resident one."""
    for compat, upstream in (("k3-v1", (2, 1, 3, 2)), (None, (1, 0, 1, 1))):
        with _cache(k3_dir, compat) as c:
            assert c.warm(0, 5) is True and c.warm(0, 5) is False
            c.get(0, 5)
            s = c.stats()
            assert (s.hits, s.misses, s.requests, s.aggregate_adjusted_hits) == upstream
            assert _exact(s) == (1, 0, 0)
            assert (s.warm_reads, s.demand_requests) == (1, 1)


def test_batch_evicts_its_own_member_only_in_compat(k3_dir: Path) -> None:
    """Compat: a resident batch member is not stamped, so the batch evicts it (quirk 2)."""
    budget = 5 * 12_288
    for compat, member_survives in (("k3-v1", False), (None, True)):
        with _cache(k3_dir, compat, budget) as c:
            for e in range(5):
                c.get(0, e)  # expert 0 is now the least recently used
            c.begin_layer()
            c.get_many(0, [0, 5])
            assert (c.resident(0, 0) is not None) is member_survives
            c.reset_stats()
            c.get(0, 0)
            assert c.stats().misses == (0 if member_survives else 1)
