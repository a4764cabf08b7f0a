"""Array views for figures equal the engine's slow paths exactly: routing, shares, removal diffs,
bounded loads; plus the windowed percentile and the Pareto mask on hand-worked inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.errors import ParamError
from core.fleet.ring import ConsistentHashRing
from core.fleet.spread import bounded_load_point, removal_moves, ring_spread
from core.fleet.views import (
    DRAW_STRIDE,
    bounded_sweep,
    cluster_ids,
    keyspace_shares,
    next_other_owner,
    pareto_front,
    primary_points,
    removal_view,
    ring_view,
    route_counts,
    session_array,
    share_sweep,
    windowed_percentile,
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
    hashes = session_array(3000)
    j = primary_points(view, hashes)
    nxt = next_other_owner(view)
    routes = [ring.route_hash(int(h)) for h in hashes]
    base = draw * DRAW_STRIDE
    assert (view.owners[j] + base).tolist() == [p for p, _ in routes]
    assert (view.owners[nxt[j]] + base).tolist() == [s for _, s in routes]


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


def test_share_sweep_draws_differ_and_shrink_with_vnodes():
    s = share_sweep(8, (1, 16, 256), (0, 1, 2, 3))
    assert s.cv.shape == (4, 3)
    assert len(set(s.cv[:, 0].tolist())) == 4  # independent placements
    assert np.all(s.cv.mean(axis=0)[1:] < s.cv.mean(axis=0)[:-1])
    assert s.cv[0, 1] == pytest.approx(ring_spread(8, 16, 10).share_cv)


@pytest.mark.parametrize(("c", "s"), [(1.0, 0.0), (1.25, 1.2), (1.5, 1.0), (math.inf, 1.2)])
def test_bounded_sweep_matches_bounded_load_point(c, s):
    (run,) = bounded_sweep((c,), s, clusters=8, vnodes=16, prefixes=50, requests=600, seed=3)
    ref = bounded_load_point(c, s, clusters=8, vnodes=16, prefixes=50, requests=600, seed=3)
    assert run.max_over_mean == pytest.approx(ref.max_over_mean)
    assert run.on_primary == pytest.approx(ref.on_primary)
    assert run.loads.sum() == 600
    if not math.isinf(c):
        assert run.loads.max() <= run.cap == math.ceil(c * 600 / 8)


def test_windowed_percentile_by_hand():
    t = np.array([0.5, 1.5, 1.6, 1.7, 3.5])
    v = np.array([1.0, 2.0, 4.0, 6.0, 9.0])
    out = windowed_percentile(t, v, np.array([0.0, 1.0, 2.0, 3.0, 4.0]), q=50.0)
    assert out[0] == 1.0 and out[1] == 4.0 and math.isnan(out[2]) and out[3] == 9.0


def test_pareto_front_by_hand():
    """Minimise cost, maximise gain: (1, .5) and (2, .9) survive; (3, .8) and (2, .4) do not."""
    cost = np.array([1.0, 2.0, 3.0, 2.0])
    gain = np.array([0.5, 0.9, 0.8, 0.4])
    assert pareto_front(cost, gain).tolist() == [True, True, False, False]
