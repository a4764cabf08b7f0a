"""The upstream parity battery (tests/unit/test_cache.c) on the fixture, byte-exact.

Every view handed out is compared with safe_open. Counters are kimi-k3-in-c v1.0.0's, derived
in reference/expert-cache.md section 10: serial thrash 0 hits / 72 misses / 64 evictions;
6 batches of 4 all prefetched hits; the mixed schedule 24 hits against 26 prefetch reads,
which the aggregate "hits - prefetch_reads" cannot express and the exact counters can.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.experts import CacheStats, ExpertCache, ShardIndex, invariant_errors

from .conftest import BUDGET_8, Truth, assert_exact

MODES = [
    pytest.param("k3-v1", None, True, id="compat"),
    pytest.param("k3-v1", 4096, True, id="compat-chunk4096"),
    pytest.param(None, None, True, id="fixed"),
    pytest.param(None, 4096, False, id="fixed-chunk4096-buffered"),
]


def _window(stats: CacheStats, *keys: str) -> dict[str, int]:
    return {k: getattr(stats, k) for k in keys}


@pytest.mark.parametrize("compat,chunk,direct", MODES)
def test_upstream_battery(battery_dir: Path, compat, chunk, direct) -> None:
    truth = Truth(battery_dir)
    with ExpertCache(ShardIndex.open(battery_dir), 1, 24, 4, BUDGET_8, compat=compat,
                     chunk_bytes=chunk, direct_io=direct) as cache:
        assert cache.n_slots == 8 < 24  # pressure: eviction runs constantly

        # 1. serial: 3 passes x 24, every read byte-exact; a token's 4 gets per layer
        for _ in range(3):
            for e in range(24):
                if e % 4 == 0:
                    cache.begin_layer()  # fixed mode: the previous token's leases end
                assert_exact(cache.get(0, e), truth, 0, e)
        s = cache.stats()
        assert _window(s, "hits", "misses", "evictions") == \
            {"hits": 0, "misses": 72, "evictions": 64}
        assert s.bytes_read == 72 * 1_632 and s.demand_misses == 72
        assert s.device_bytes == 3 * 127_744  # aligned windows, EOF-clipped last expert
        assert invariant_errors(s) == []

        # 2. reset; 6 batches of 4: get_many, then get each
        cache.reset_stats()
        for start in range(0, 24, 4):
            ids = list(range(start, start + 4))
            cache.begin_layer()
            assert cache.get_many(0, ids) == 4
            for e in ids:
                assert_exact(cache.get(0, e), truth, 0, e)
        s = cache.stats()
        assert _window(s, "hits", "misses", "prefetch_reads", "evictions") == \
            {"hits": 24, "misses": 0, "prefetch_reads": 24, "evictions": 24}
        assert s.prefetch_reads <= s.hits  # upstream's only accounting assert
        assert s.true_resident_rate == 0.0
        assert _window(s, "hits_prefetched", "hits_resident", "prefetch_wasted") == \
            {"hits_prefetched": 24, "hits_resident": 0, "prefetch_wasted": 0}
        assert invariant_errors(s) == []

        # 3. reset; mixed: get_many([e..e+3] mod 24) on even e, then get(e)
        cache.reset_stats()
        for e in range(24):
            if e % 2 == 0:
                cache.begin_layer()
                cache.get_many(0, [(e + j) % 24 for j in range(4)])
            assert_exact(cache.get(0, e), truth, 0, e)
        s = cache.stats()
        assert _window(s, "hits", "misses", "prefetch_reads", "evictions") == \
            {"hits": 24, "misses": 0, "prefetch_reads": 26, "evictions": 26}
        assert s.aggregate_adjusted_hits == -2 and s.true_resident_rate == 0.0
        assert _window(s, "hits_prefetched", "hits_resident", "prefetch_pending",
                       "prefetch_wasted", "carried_pending") == {
            "hits_prefetched": 24, "hits_resident": 0, "prefetch_pending": 2,
            "prefetch_wasted": 0, "carried_pending": 0}
        pending = sorted(x.expert for x in cache.snapshot().slots
                         if x.origin == "prefetch" and not x.consumed)
        assert pending == [0, 1]  # re-read at e = 22, never consumed
        # 26 + 0 == 24 + 0 + 2
        assert invariant_errors(s) == []
        assert all(x.state != "INFLIGHT" for x in cache.snapshot().slots)
