"""The array ring and its sweeps equal the engine's slow paths exactly: routing (primary and
secondary), keyspace shares, session spread, removal diffs and bounded loads. A figure that
drew the array path while the tests checked the engine would otherwise show a different ring."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from core.errors import ParamError
from core.fleet.ring import ConsistentHashRing
from core.fleet.ring_arrays import (
    DRAW_STRIDE,
    cluster_ids,
    keyspace_shares,
    next_other_owner,
    ring_view,
    route_counts,
    route_keys,
    session_array,
)
from core.fleet.spread import bounded_load_point, removal_moves, ring_spread, session_hashes
from core.fleet.spread_arrays import (
    bounded_sweep,
    removal_sweep,
    removal_view,
    session_sweep,
    share_sweep,
)


@pytest.mark.parametrize(
    ("clusters", "vnodes", "draw"), [(8, 8, 0), (3, 1, 0), (5, 37, 2), (16, 300, 1)]
)
def test_ring_view_routes_like_the_engine(clusters, vnodes, draw):
    """Primary and secondary of 3,000 keys equal ConsistentHashRing.route_hash."""
    ids = cluster_ids(clusters, draw)
    ring = ConsistentHashRing(ids, vnodes=vnodes)
    view = ring_view(clusters, vnodes, draw)
    assert view.points.tolist() == [p for p, _ in ring.points()]
    primary, secondary = route_keys(view, session_array(3000))
    routes = [ring.route_hash(int(h)) for h in session_array(3000)]
    base = draw * DRAW_STRIDE
    assert (primary + base).tolist() == [p for p, _ in routes]
    assert (secondary + base).tolist() == [s for _, s in routes]


@pytest.mark.parametrize("vnodes", [1, 8, 128])
def test_shares_and_counts_match_the_engine(vnodes):
    ring = ConsistentHashRing(range(8), vnodes=vnodes)
    view = ring_view(8, vnodes)
    shares = ring.keyspace_shares()
    assert keyspace_shares(view) == pytest.approx([shares[k] for k in range(8)], abs=1e-12)
    assert keyspace_shares(view).sum() == pytest.approx(1.0)
    spread = ring_spread(8, vnodes, 5000)
    counts = route_counts(view, session_array(5000))
    assert counts.max() / counts.mean() == pytest.approx(spread.max_over_mean)
    assert counts.std() / counts.mean() == pytest.approx(spread.cv)


def test_single_point_ring_owns_everything():
    assert keyspace_shares(ring_view(1, 1)).tolist() == [1.0]
    with pytest.raises(ParamError, match="clusters"):
        next_other_owner(ring_view(1, 4))


@pytest.mark.parametrize(("clusters", "vnodes", "removed"), [(8, 8, 0), (8, 128, 3), (4, 2, 1)])
def test_removal_view_matches_removal_moves(clusters, vnodes, removed):
    r = removal_view(clusters, vnodes, 6000, removed)
    m = removal_moves(clusters, vnodes, 6000, removed)
    assert r.moved == m.moved
    assert r.removed_share == pytest.approx(m.expected_fraction, abs=1e-12)
    assert r.only_removed_moved and m.only_removed_moved
    assert r.to_old_secondary == m.to_old_secondary == 1.0
    assert r.after[removed] == 0
    assert r.gained.sum() == r.moved == r.before[removed]
    assert r.after.sum() == r.before.sum() == 6000
    assert np.all(r.after == np.where(np.arange(clusters) == removed, 0, r.before + r.gained))


@pytest.mark.parametrize(("clusters", "vnodes", "removed"), [(8, 8, 0), (5, 32, 2)])
def test_receivers_match_a_slow_count_on_the_engine(clusters, vnodes, removed):
    """Where the removed cluster's sessions went, counted key by key on ConsistentHashRing."""
    ring = ConsistentHashRing(range(clusters), vnodes=vnodes)
    hashes = session_hashes(4000)
    before = [ring.route_hash(h)[0] for h in hashes]
    ring.remove_cluster(removed)
    landed = Counter(ring.route_hash(h)[0] for h, b in zip(hashes, before, strict=True)
                     if b == removed)
    r = removal_view(clusters, vnodes, 4000, removed)
    assert r.receivers == len(landed)
    assert r.largest_receiver_share == pytest.approx(max(landed.values()) / sum(landed.values()))


def test_share_sweep_draws_differ_and_shrink_with_vnodes():
    s = share_sweep(8, (1, 16, 256), (0, 1, 2, 3))
    assert s.cv.shape == (4, 3)
    assert len(set(s.cv[:, 0].tolist())) == 4  # independent placements
    assert np.all(s.cv.mean(axis=0)[1:] < s.cv.mean(axis=0)[:-1])
    assert s.cv[0, 1] == pytest.approx(ring_spread(8, 16, 10).share_cv)


def test_session_sweep_matches_ring_spread_at_every_vnode_count():
    """Draw 0 is the engine's ring over clusters 0..N-1: ring_spread routes the same keys."""
    sweep = session_sweep(6, (1, 8, 64), 3000)
    for j, v in enumerate((1, 8, 64)):
        point = ring_spread(6, v, 3000)
        assert sweep.cv[j] == pytest.approx(point.cv, rel=1e-12)
        assert sweep.max_over_mean[j] == pytest.approx(point.max_over_mean, rel=1e-12)


def test_removal_sweep_matches_removal_moves_at_every_vnode_count():
    sweep = removal_sweep(6, (2, 16), 3000, removed=1)
    for j, v in enumerate((2, 16)):
        m = removal_moves(6, v, 3000, removed=1)
        assert sweep.moved_fraction[j] == m.moved_fraction
        assert sweep.removed_share[j] == pytest.approx(m.expected_fraction, abs=1e-12)


@pytest.mark.parametrize(("c", "s"), [(1.0, 0.0), (1.25, 1.2), (1.5, 1.0), (math.inf, 1.2)])
def test_bounded_sweep_matches_bounded_load_point(c, s):
    (run,) = bounded_sweep((c,), s, clusters=8, vnodes=16, prefixes=50, requests=600, seed=3)
    ref = bounded_load_point(c, s, clusters=8, vnodes=16, prefixes=50, requests=600, seed=3)
    assert run.max_over_mean == pytest.approx(ref.max_over_mean)
    assert run.on_primary == pytest.approx(ref.on_primary)
    assert run.loads.sum() == 600
    assert run.within_cap
    if not math.isinf(c):
        assert run.loads.max() <= run.cap == math.ceil(c * 600 / 8)
