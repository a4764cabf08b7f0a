"""Demand batches: get_many(layer, ids, demand=True) is demand, never prefetch.

The bug pinned: CacheProvider used to load each layer's experts with a plain get_many, so the
experts the layer needed right then were counted as prefetch reads and their gets as
prefetched hits: a cold cache looked like a perfect prefetcher. A demand batch publishes with
origin "demand_batch": its reads count in demand_batch_reads, the first get of each member is a
demand miss (demand_batch_misses, inside demand_misses and the upstream misses), a later get is
a resident hit, and nothing of it is ever pending, wasted or a prefetched hit. Worked by hand
on 8 slots of the project's fixture (1 layer, 24 experts, top-4).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ParamError
from core.experts import ExpertCache, ShardIndex, invariant_errors

from .conftest import BUDGET_8, Truth, assert_exact


def _cache(d: Path, compat=None) -> ExpertCache:
    return ExpertCache(ShardIndex.open(d), 1, 24, 4, BUDGET_8, compat=compat)


def test_demand_batch_counts_as_misses(k3_dir: Path, k3_truth: Truth) -> None:
    """Batch {3, 7} on demand, get 3, 7, 3: two batched misses, then one resident hit."""
    with _cache(k3_dir) as c:
        assert c.get_many(0, [3, 7], demand=True) == 2
        for e in (3, 7, 3):
            assert_exact(c.get(0, e), k3_truth, 0, e)
        s = c.stats()
        assert (s.demand_requests, s.demand_misses, s.demand_batch_misses) == (3, 2, 2)
        assert (s.hits, s.misses, s.hits_resident, s.hits_prefetched) == (1, 2, 1, 0)
        assert (s.demand_batch_reads, s.prefetch_reads, s.demand_reads) == (2, 0, 0)
        assert s.prefetch_pending == 0 and s.exact_miss_rate == pytest.approx(2 / 3)
        assert invariant_errors(s) == []
        ops = [(e.op, e.expert, e.origin) for e in c.events() if e.op in ("miss", "hit_resident")]
        assert ops == [("miss", 3, "demand_batch"), ("miss", 7, "demand_batch"),
                       ("hit_resident", 3, "demand_batch")]


def test_the_same_schedule_as_a_prefetch(k3_dir: Path) -> None:
    """Without demand=True the same calls are a prefetch: two prefetched hits, no miss."""
    with _cache(k3_dir) as c:
        c.get_many(0, [3, 7])
        for e in (3, 7, 3):
            c.get(0, e)
        s = c.stats()
        assert (s.hits_prefetched, s.hits_resident, s.demand_misses) == (2, 1, 0)
        assert (s.prefetch_reads, s.demand_batch_reads) == (2, 0)


def test_unconsumed_member_evicted_is_counted_apart(k3_dir: Path) -> None:
    """Batch {0..7} on demand fills all 8 slots; get only 0; begin_layer; a get of 8 evicts the
    LRU member 1, never used: demand_batch_unused, not prefetch waste and not after-use."""
    with _cache(k3_dir) as c:
        c.get_many(0, list(range(8)), demand=True)
        c.get(0, 0)
        c.begin_layer()
        c.get(0, 8)
        s = c.stats()
        assert (s.evictions, s.demand_batch_unused, s.prefetch_wasted, s.evicted_after_use) == \
            (1, 1, 0, 0)
        assert s.wasted_bytes == 0 and invariant_errors(s) == []


def test_already_resident_members_are_resident_hits(k3_dir: Path) -> None:
    """get 5 (a serial miss), then a demand batch {5, 6}: 5 is resident, 6 is read."""
    with _cache(k3_dir) as c:
        c.get(0, 5)
        assert c.get_many(0, [5, 6], demand=True) == 1
        c.get(0, 5)
        c.get(0, 6)
        s = c.stats()
        assert (s.hits_resident, s.demand_misses, s.demand_reads, s.demand_batch_reads) == \
            (1, 2, 1, 1)


def test_compat_mode_has_no_demand_batches(k3_dir: Path) -> None:
    with _cache(k3_dir, compat="k3-v1") as c, pytest.raises(ParamError, match="fixed-mode"):
        c.get_many(0, [1], demand=True)
    with _cache(k3_dir) as c, pytest.raises(ParamError, match="demand must be a bool"):
        c.get_many(0, [1], demand=1)
