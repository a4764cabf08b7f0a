"""Routers in isolation: each returns a live cluster, ties go to the lowest id, and the bounded
ring respects its cap."""

from __future__ import annotations

import math

import pytest

from core.errors import ParamError
from core.fleet.prefix_index import PrefixIndex
from core.fleet.ring import ConsistentHashRing, bounded_capacity
from core.fleet.routers import (
    ROUTERS,
    BoundedRing,
    CacheAware,
    FleetState,
    LeastLoaded,
    PlainRing,
    RoundRobin,
    make_router,
)


def _fleet(n=4, loads=None, dead=()) -> FleetState:
    fleet = FleetState([PrefixIndex(64) for _ in range(n)])
    for c, load in enumerate(loads or [0] * n):
        fleet.load[c] = load
    fleet.total_load = sum(fleet.load)
    for c in dead:
        fleet.live[c] = False
        fleet.n_live -= 1
    return fleet


class TestSimpleRouters:
    def test_round_robin_cycles_and_skips_dead(self):
        rr, fleet = RoundRobin(), _fleet(4, dead=(2,))
        assert [rr.choose(0, None, fleet) for _ in range(6)] == [0, 1, 3, 0, 1, 3]

    @pytest.mark.parametrize("name", ROUTERS)
    def test_no_live_cluster_raises_a_clear_error(self, name):
        """RoundRobin used to spin forever here; every router must refuse instead."""
        router, fleet = make_router(name, 3, vnodes=8), _fleet(3, dead=(0, 1, 2))
        for c in range(3):
            router.set_live(c, False)
        with pytest.raises(ParamError, match="no live cluster"):
            router.choose(7, [1, 2], fleet)

    def test_round_robin_resumes_after_a_full_outage(self):
        rr, fleet = RoundRobin(), _fleet(3, dead=(0, 1, 2))
        with pytest.raises(ParamError, match="no live cluster"):
            rr.choose(0, None, fleet)
        fleet.live[1] = True
        fleet.n_live = 1
        assert [rr.choose(0, None, fleet) for _ in range(3)] == [1, 1, 1]

    def test_least_loaded_ties_to_lowest_id(self):
        ll = LeastLoaded()
        assert ll.choose(0, None, _fleet(4, [3, 1, 1, 2])) == 1
        assert ll.choose(0, None, _fleet(4, [3, 1, 1, 2], dead=(1,))) == 2


class TestRingRouters:
    def test_plain_ring_follows_the_ring_and_its_failures(self):
        ring = ConsistentHashRing(range(4), vnodes=32)
        router = PlainRing(ConsistentHashRing(range(4), vnodes=32))
        fleet = _fleet(4)
        assert all(router.choose(k, None, fleet) == ring.route(k)[0] for k in range(300))
        router.set_live(1, False)
        for k in range(300):
            primary, secondary = ring.route(k)
            assert router.choose(k, None, fleet) == (secondary if primary == 1 else primary)

    def test_bounded_ring_caps_load(self):
        router = BoundedRing(ConsistentHashRing(range(4), vnodes=32), c=1.25)
        fleet = _fleet(4)
        for k in range(2000):
            c = router.choose(k, None, fleet)
            assert fleet.load[c] < bounded_capacity(fleet.total_load, 4, 1.25)
            fleet.load[c] += 1
            fleet.total_load += 1
        assert max(fleet.load) <= math.ceil(1.25 * 2000 / 4)

    def test_bounded_ring_router_equals_ring_route_bounded(self):
        """The router walks vnodes; the ring walks its distinct-cluster preference list."""
        import random

        rng = random.Random(4)
        ring = ConsistentHashRing(range(6), vnodes=16)
        router = BoundedRing(ConsistentHashRing(range(6), vnodes=16), c=1.1)
        ring.set_alive(4, False)
        router.set_live(4, False)
        for k in range(500):
            fleet = _fleet(6, [rng.randrange(0, 6) for _ in range(6)], dead=(4,))
            fleet.total_load -= fleet.load[4]
            fleet.load[4] = 0
            expect = ring.route_bounded(k, fleet.load, 1.1, fleet.total_load)
            assert router.choose(k, None, fleet) == expect

    def test_bounded_ring_with_infinite_c_is_the_plain_ring(self):
        plain = PlainRing(ConsistentHashRing(range(4), vnodes=32))
        bounded = BoundedRing(ConsistentHashRing(range(4), vnodes=32), c=math.inf)
        fleet = _fleet(4, [50, 0, 0, 0], dead=(2,))
        plain.set_live(2, False)
        bounded.set_live(2, False)
        assert all(
            plain.choose(k, None, fleet) == bounded.choose(k, None, fleet) for k in range(300)
        )


class TestCacheAware:
    def test_prefers_the_cluster_holding_the_prefix(self):
        fleet = _fleet(4, [1, 1, 1, 1])
        blocks = [10, 11, 12, 13]
        fleet.caches[2].match_and_insert(blocks)
        assert CacheAware(beta=0.5).choose(0, blocks, fleet) == 2

    def test_load_outweighs_a_partial_match(self):
        fleet = _fleet(4, [0, 0, 6, 0])
        fleet.total_load = 6
        blocks = [10, 11, 12, 13]
        fleet.caches[2].match_and_insert(blocks[:1])  # 25% match, load 6 vs mean 1.5
        assert CacheAware(beta=0.5).choose(0, blocks, fleet) == 0

    def test_skips_dead_clusters(self):
        fleet = _fleet(3, dead=(0,))
        fleet.caches[0].match_and_insert([1, 2])
        assert CacheAware().choose(0, [1, 2], fleet) == 1


def test_make_router_validates():
    assert {make_router(r, 4).name for r in ROUTERS} == set(ROUTERS)
    with pytest.raises(ParamError, match="router"):
        make_router("random", 4)
    with pytest.raises(ParamError, match="clusters"):
        make_router("ring", 0)
    with pytest.raises(ParamError, match="bound_c"):
        make_router("bounded_ring", 4, bound_c=0.9)


def test_cache_aware_exact_ties_go_to_the_lowest_id():
    """Half a match at one extra unit of load ties with no match at mean load (beta = 0.5)."""
    blocks = [1, 2]
    for holder in (0, 1):
        fleet = _fleet(2)
        fleet.load[holder] = fleet.total_load = 1
        fleet.caches[holder].match_and_insert(blocks[:1])  # 0.5 - 0.5 * (1 - 0.5) = 0.25
        # the other cluster: 0 - 0.5 * (0 - 0.5) = 0.25
        assert CacheAware(beta=0.5).choose(0, blocks, fleet) == 0
