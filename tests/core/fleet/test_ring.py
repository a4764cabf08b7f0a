"""ConsistentHashRing: stable placement, distinct secondaries, minimal perturbation, bounded loads.

Pins the classic bugs: Python's salted hash() in placement (rings differ between processes), a
secondary that is just the next vnode (often the same physical cluster), and removal that
reshuffles keys that never lived on the removed cluster.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ParamError
from core.fleet.ring import ConsistentHashRing, bounded_capacity, hash64, naive_route
from core.fleet.spread import (
    noise_floor_cv,
    removal_moves,
    ring_spread,
    rule_of_thumb_cv,
    session_hashes,
    spread_vs_vnodes,
)
from core.fleet.spread_arrays import share_sweep

REPO = Path(__file__).resolve().parents[3]
N_SESSIONS = 40_000

_CHILD = """
import json
from tests.core.fleet.test_ring import routes_and_sim_digest
print(json.dumps(routes_and_sim_digest()))
"""


def routes_and_sim_digest() -> list:
    """Routes of 500 keys with a dead cluster, plus a digest of a small simulation with failover."""
    import hashlib

    from core.fleet.config import SimConfig
    from core.fleet.simulator import simulate
    from core.fleet.traces import TraceConfig, multi_turn_trace

    ring = ConsistentHashRing(range(8), vnodes=64)
    ring.set_alive(3, False)
    routes = [list(ring.route(f"s{i}")) for i in range(500)]
    trace = multi_turn_trace(TraceConfig(n_requests=800, seed=11))
    for router in ("ring", "cache_aware"):
        cfg = SimConfig(router=router, fail_cluster=1, fail_at=5.0, recover_at=9.0)
        rec = simulate(trace, cfg).records
        digest = hashlib.sha256(rec.ttft.tobytes() + rec.cluster.tobytes()).hexdigest()
        routes.append([router, digest])
    return routes


class TestPlacement:
    def test_routing_is_identical_across_processes(self):
        """Children with other PYTHONHASHSEEDs route every key, and simulate, exactly as here."""
        here = routes_and_sim_digest()
        for seed in ("1", "987654321"):
            env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
            out = subprocess.run(
                [sys.executable, "-c", _CHILD],
                env=env,
                cwd=REPO,
                capture_output=True,
                text=True,
                check=True,
                timeout=60,
            )
            assert json.loads(out.stdout) == here, f"PYTHONHASHSEED={seed} changed routing"

    def test_hash64_is_pinned(self):
        """Pinned values: a change of hash function or encoding would silently move every key."""
        assert hash64("session-0") == 13141386955394713551
        assert hash64("0#0") == 4420183435908471341  # cluster 0's first vnode
        assert hash64("session-0") == hash64(b"session-0")
        assert hash64(7) == hash64("7")
        assert 0 <= hash64("x") < 2**64

    def test_insertion_order_does_not_matter(self):
        a = ConsistentHashRing([0, 1, 2, 3], vnodes=32)
        b = ConsistentHashRing([3, 1, 0, 2], vnodes=32)
        assert a.points() == b.points()


class TestRoute:
    @pytest.mark.parametrize("vnodes", [1, 2, 8, 128])
    def test_secondary_is_a_different_physical_cluster(self, vnodes):
        ring = ConsistentHashRing(range(5), vnodes=vnodes)
        for i in range(2000):
            primary, secondary = ring.route(f"k{i}")
            assert secondary is not None and secondary != primary

    def test_single_live_cluster_has_no_secondary(self):
        ring = ConsistentHashRing(["a", "b"], vnodes=8)
        ring.set_alive("b", False)
        assert ring.route("x") == ("a", None)
        assert ConsistentHashRing(["solo"], vnodes=4).route("y") == ("solo", None)

    @settings(max_examples=60, deadline=None)
    @given(
        keys=st.lists(st.text(max_size=12), min_size=1, max_size=40),
        vnodes=st.integers(1, 24),
        dead=st.sets(st.integers(0, 5), max_size=5),
    )
    def test_bisect_route_equals_linear_scan_twin(self, keys, vnodes, dead):
        """Slow twin: sort all points by clockwise distance instead of bisecting."""
        ring = ConsistentHashRing(range(6), vnodes=vnodes)
        for c in dead:
            ring.set_alive(c, False)
        for key in keys:
            assert ring.route(key) == naive_route(ring, key)

    def test_dead_clusters_are_skipped_in_both_roles(self):
        ring = ConsistentHashRing(range(8), vnodes=32)
        before = {i: ring.route(i) for i in range(3000)}
        ring.set_alive(5, False)
        for i, (p0, _) in before.items():
            p, s = ring.route(i)
            assert 5 not in (p, s)
            if p0 != 5:
                assert p == p0, "a key not owned by the dead cluster changed primary"
        ring.set_alive(5, True)
        assert {i: ring.route(i) for i in range(3000)} == before

    def test_empty_or_all_dead_ring_raises(self):
        with pytest.raises(ParamError, match="no live cluster"):
            ConsistentHashRing(vnodes=4).route("k")
        ring = ConsistentHashRing([1], vnodes=4)
        ring.set_alive(1, False)
        with pytest.raises(ParamError, match="no live cluster"):
            ring.route("k")

    @pytest.mark.parametrize("bad", [0, -1, 4097, 2.5, "8", True])
    def test_bad_vnodes_raise(self, bad):
        with pytest.raises(ParamError, match="vnodes"):
            ConsistentHashRing(range(2), vnodes=bad)

    def test_membership_errors_name_the_cluster(self):
        ring = ConsistentHashRing(range(2), vnodes=4)
        with pytest.raises(ParamError, match="already"):
            ring.add_cluster(1)
        with pytest.raises(ParamError, match="cluster"):
            ring.remove_cluster(9)
        with pytest.raises(ParamError, match="cluster"):
            ring.set_alive(9, False)
        with pytest.raises(ParamError, match="cluster"):
            ring.add_cluster(1.5)  # type: ignore[arg-type]

    @pytest.mark.parametrize("ids", [[1, "1"], ["1", 1], [0, 2, "2"], ["a", 7, "7"]])
    def test_ids_with_the_same_text_are_refused(self, ids):
        """1 and "1" hash to the same vnodes; the tie-break used to compare int with str."""
        with pytest.raises(ParamError, match=r"^clusters: .*same text"):
            ConsistentHashRing(ids, vnodes=4)

    def test_add_cluster_refuses_a_text_twin_and_removal_frees_the_text(self):
        ring = ConsistentHashRing([1, 2], vnodes=4)
        with pytest.raises(ParamError, match=r"^cluster: .*same text"):
            ring.add_cluster("1")
        assert ring.members == [1, 2]
        ring.remove_cluster(1)
        ring.add_cluster("1")  # no longer ambiguous
        assert set(ring.live) == {2, "1"} and ring.route("k")[0] in (2, "1")


class TestPerturbation:
    def test_removal_moves_only_the_removed_clusters_keys(self):
        """8 clusters x 128 vnodes, 40k sessions: about 1/N move, all to their old secondary."""
        stats = removal_moves(clusters=8, vnodes=128, sessions=N_SESSIONS, removed=3)
        assert stats.moved_fraction <= 1.25 / 8
        assert stats.moved_fraction == pytest.approx(stats.expected_fraction, abs=0.01)
        assert stats.only_removed_moved
        assert stats.to_old_secondary == 1.0

    def test_every_other_key_keeps_its_primary(self):
        ring = ConsistentHashRing(range(8), vnodes=128)
        hashes = session_hashes(N_SESSIONS)
        before = [ring.route_hash(h)[0] for h in hashes]
        ring.remove_cluster(6)
        after = [ring.route_hash(h)[0] for h in hashes]
        assert [a for b, a in zip(before, after, strict=True) if b != 6] == [
            b for b in before if b != 6
        ]

    def test_adding_a_cluster_moves_keys_only_to_it(self):
        ring = ConsistentHashRing(range(8), vnodes=128)
        hashes = session_hashes(N_SESSIONS)
        before = [ring.route_hash(h)[0] for h in hashes]
        ring.add_cluster(8)
        after = [ring.route_hash(h)[0] for h in hashes]
        moved = [a for b, a in zip(before, after, strict=True) if a != b]
        assert set(moved) == {8}
        assert len(moved) / N_SESSIONS <= 1.25 / 9


class TestSpread:
    def test_max_over_mean_at_128_vnodes(self):
        point = ring_spread(clusters=8, vnodes=128, sessions=N_SESSIONS)
        assert point.max_over_mean <= 1.25

    @pytest.mark.parametrize("vnodes", [4, 16, 64])
    def test_rule_of_thumb_predicts_the_measured_share_cv(self, vnodes):
        """Averaged over 32 ring draws, the exact share CV is within 15% of 1/sqrt(V)
        (the population std over N = 16 clusters runs a few percent below it)."""
        measured = share_sweep(16, (vnodes,), tuple(range(32))).cv.mean()
        assert measured == pytest.approx(rule_of_thumb_cv(vnodes), rel=0.15)

    def test_cv_shrinks_with_vnodes_like_one_over_sqrt_v(self):
        low, high = spread_vs_vnodes((8, 512), clusters=8, sessions=N_SESSIONS)
        assert low.cv > 2 * high.cv
        assert high.share_cv < 2 * high.rule_of_thumb

    def test_keyspace_shares_sum_to_one_and_pass_dead_arcs_on(self):
        ring = ConsistentHashRing(range(8), vnodes=16)
        assert sum(ring.keyspace_shares().values()) == pytest.approx(1.0)
        ring.set_alive(2, False)
        shares = ring.keyspace_shares()
        assert 2 not in shares and sum(shares.values()) == pytest.approx(1.0)


class TestNoiseFloor:
    """Sampling noise alone: S keys thrown uniformly at N clusters (no ring at all)."""

    def test_hand_worked(self):
        """The seed demo: 600 sessions over 8 clusters, sqrt(7 / 600) = 0.108 (about 11%)."""
        assert noise_floor_cv(8, 600) == pytest.approx(0.1080123, rel=1e-6)
        assert noise_floor_cv(1, 50) == 0.0

    @pytest.mark.parametrize(("clusters", "sessions"), [(8, 600), (4, 100), (16, 40_000)])
    def test_equals_the_mean_square_cv_of_multinomial_counts(self, clusters, sessions):
        rng = np.random.default_rng(7)
        counts = rng.multinomial(sessions, [1 / clusters] * clusters, size=4000)
        cv2 = (counts.std(axis=1) / counts.mean(axis=1)) ** 2
        assert np.sqrt(cv2.mean()) == pytest.approx(noise_floor_cv(clusters, sessions), rel=0.03)

    @pytest.mark.parametrize(("args", "name"), [((0, 10), "clusters"), ((8, 0), "sessions"),
                                                ((8, 2.5), "sessions")])
    def test_bad_input_names_the_parameter(self, args, name):
        with pytest.raises(ParamError, match=name):
            noise_floor_cv(*args)
        with pytest.raises(ParamError, match="vnodes"):
            rule_of_thumb_cv(0)


class TestBoundedLoads:
    @pytest.mark.parametrize("c", [1.0, 1.1, 1.25, 2.0])
    def test_no_cluster_exceeds_its_capacity(self, c):
        ring = ConsistentHashRing(range(8), vnodes=128)
        loads = [0] * 8
        for total in range(8000):
            k = ring.route_bounded(f"session-{total}", loads, c, total)
            assert loads[k] + 1 <= bounded_capacity(total, 8, c)
            loads[k] += 1
        assert max(loads) <= math.ceil(c * sum(loads) / 8)

    def test_infinite_c_is_the_plain_ring(self):
        ring = ConsistentHashRing(range(8), vnodes=64)
        loads = [10**6, 0, 0, 0, 0, 0, 0, 0]
        for i in range(500):
            assert ring.route_bounded(i, loads, math.inf) == ring.route(i)[0]

    def test_spill_goes_clockwise_to_the_first_non_full_cluster(self):
        ring = ConsistentHashRing(range(8), vnodes=64)
        for i in range(300):
            order = ring.preference(i)
            loads = [0] * 8
            loads[order[0]] = loads[order[1]] = 5  # primary and secondary full (cap = 2)
            assert ring.route_bounded(i, loads, 1.0, total=10) == order[2]

    def test_bad_c_raises(self):
        ring = ConsistentHashRing(range(2), vnodes=4)
        with pytest.raises(ParamError, match="c must be in"):
            ring.route_bounded("k", [0, 0], 0.5)
