"""PrefixIndex: LRU over chained block ids, touched tail first so eviction never leaves a hole in
a cached prefix; checked against a list-based slow twin."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ParamError
from core.fleet.prefix_index import NaivePrefixIndex, PrefixIndex


def _chain(session: int, n: int) -> list[int]:
    return [session * 1000 + j for j in range(n)]


class TestPrefixIndex:
    def test_hit_is_the_leading_run(self):
        cache = PrefixIndex(100)
        assert cache.match_and_insert(_chain(1, 4)) == 0
        assert cache.match_and_insert(_chain(1, 6)) == 4
        assert cache.match([1000, 9, 1002]) == 1

    def test_match_changes_nothing(self):
        cache = PrefixIndex(4)
        cache.match_and_insert(_chain(1, 2))
        before = cache.snapshot()
        cache.match(_chain(1, 2) + _chain(2, 3))
        assert cache.snapshot() == before

    def test_eviction_takes_tails_first(self):
        """Over capacity, the cold chain loses its tail while its head survives."""
        cache = PrefixIndex(6)
        cache.match_and_insert(_chain(1, 4))
        cache.match_and_insert(_chain(2, 4))  # 8 blocks into 6: chain 1 loses its last two
        assert cache.match(_chain(1, 4)) == 2
        assert cache.match(_chain(2, 4)) == 4
        assert cache.num_evicted == 2

    def test_zero_capacity_never_caches_and_clear_reports_loss(self):
        assert PrefixIndex(0).match_and_insert(_chain(1, 3)) == 0
        cache = PrefixIndex(10, block_size=512)
        cache.match_and_insert(_chain(1, 3))
        assert cache.tokens == 3 * 512
        assert cache.clear() == 3 and len(cache) == 0

    def test_bad_capacity(self):
        with pytest.raises(ParamError, match="capacity_blocks"):
            PrefixIndex(-1)

    @settings(max_examples=80, deadline=None)
    @given(
        cap=st.integers(0, 12),
        requests=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 8)), max_size=40),
        every=st.integers(1, 4),
        group_cost=st.sampled_from([0.0, 0.5, 2.25, 31.74]),
    )
    def test_equals_slow_twin_and_keeps_prefixes(self, cap, requests, every, group_cost):
        fast = PrefixIndex(cap, every=every, group_cost=group_cost)
        slow = NaivePrefixIndex(cap, every=every, group_cost=group_cost)
        for session, n in requests:
            blocks = _chain(session, n)
            assert fast.match(blocks) == slow.match(blocks)
            assert fast.match_and_insert(blocks) == slow.match_and_insert(blocks)
            assert fast.snapshot() == slow.snapshot()
        held = set(fast.snapshot())
        for b in held:
            assert all(p in held for p in range(b - b % 1000, b)), "a cached block lost its head"


def test_checkpoint_groups_cost_capacity_by_hand():
    """Capacity 10 blocks, a group every 2nd block costing 3 blocks more: a 4-block chain costs
    1 + 4 + 1 + 4 = 10 and fits exactly; serving the 5-block chain adds block 5 (cost 1) and then
    evicts the least recent, which is block 5 itself (blocks are touched tail first), so the
    cache keeps the 4-block prefix. Without groups all 5 blocks fit."""
    c = PrefixIndex(10, every=2, group_cost=3.0)
    chain = _chain(0, 5)
    c.match_and_insert(chain[:4])
    assert len(c) == 4 and c.used == 10 * 1000
    c.match_and_insert(chain)
    assert set(c.snapshot()) == set(chain[:4]) and c.used == 10 * 1000
    plain = PrefixIndex(10)
    plain.match_and_insert(chain)
    assert set(plain.snapshot()) == set(chain)
