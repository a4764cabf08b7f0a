"""The consistent-hash ring as sorted numpy arrays: the vectorised twin of ring.py that the fleet
ring figures sweep (routing of many keys at once, primaries and secondaries, keyspace shares).

ring_view(n, v) routes every key exactly like ConsistentHashRing(range(n), v)
(tests/core/fleet/test_ring_arrays.py); spread_arrays.py builds the figures' sweeps on it.

A ring "draw" d names cluster k by the integer d * DRAW_STRIDE + k, so draw 0 is the simulator's
ring and every other draw is an independent placement of the same N clusters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from core.errors import ParamError, check_int
from core.fleet.ring import MAX_VNODES, vnode_points
from core.fleet.spread import session_hashes

DRAW_STRIDE = 1024  # more than the ring's cluster limit, so draws never share a name
_HASH_CHUNK = 256  # hash vnodes in prefixes of this size: points for V are the first V of V' > V


def cluster_ids(clusters: int, draw: int = 0) -> list[int]:
    clusters = check_int("clusters", clusters, 1, DRAW_STRIDE)
    draw = check_int("draw", draw, 0, 1_000_000)
    return [draw * DRAW_STRIDE + k for k in range(clusters)]


@lru_cache(maxsize=8192)
def _cluster_points(cluster_id: int, upto: int) -> np.ndarray:
    return np.array(vnode_points(cluster_id, upto), dtype=np.uint64)


@lru_cache(maxsize=4)
def session_array(sessions: int) -> np.ndarray:
    """Ring positions of "session-0" .. "session-<sessions - 1>" as a uint64 array."""
    return np.array(session_hashes(sessions), dtype=np.uint64)


@dataclass(frozen=True, slots=True, eq=False)
class RingView:
    clusters: int
    vnodes: int
    points: np.ndarray  # (P,) uint64 ring positions, sorted
    owners: np.ndarray  # (P,) int64 cluster index 0..clusters-1 of each point

    def without(self, cluster: int) -> RingView:
        """The ring after remove_cluster(cluster): its points gone, the rest unchanged."""
        keep = self.owners != check_int("removed", cluster, 0, self.clusters - 1)
        return RingView(
            clusters=self.clusters, vnodes=self.vnodes, points=self.points[keep],
            owners=self.owners[keep],
        )


def ring_view(clusters: int, vnodes: int, draw: int = 0) -> RingView:
    vnodes = check_int("vnodes", vnodes, 1, MAX_VNODES)
    ids = cluster_ids(clusters, draw)
    upto = math.ceil(vnodes / _HASH_CHUNK) * _HASH_CHUNK
    pts = np.concatenate([_cluster_points(c, upto)[:vnodes] for c in ids])  # (N*V,)
    owners = np.repeat(np.arange(len(ids), dtype=np.int64), vnodes)
    # NOTE: the engine breaks exact position ties by owner text; a tie has probability
    # about (N*V)^2 / 2^65 and is ignored here.
    order = np.argsort(pts, kind="stable")
    return RingView(clusters=len(ids), vnodes=vnodes, points=pts[order], owners=owners[order])


def primary_points(view: RingView, hashes: np.ndarray) -> np.ndarray:
    """Index of each key's first point clockwise (bisect_left, wrapping at the end)."""
    return np.searchsorted(view.points, hashes, side="left") % view.points.size


def route_keys(view: RingView, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(primary, secondary) cluster index of each key, as ConsistentHashRing.route_hash gives."""
    j = primary_points(view, hashes)
    return view.owners[j], view.owners[next_other_owner(view)[j]]


def route_counts(view: RingView, hashes: np.ndarray) -> np.ndarray:
    """Keys per cluster, each key counted on its primary: (clusters,) int64."""
    return np.bincount(view.owners[primary_points(view, hashes)], minlength=view.clusters)


def keyspace_shares(view: RingView) -> np.ndarray:
    """Fraction of the 64-bit keyspace each cluster owns: arc (p[j-1], p[j]] belongs to owner[j]."""
    pts = view.points
    if pts.size == 1:
        gaps = np.ones(1)
    else:
        gaps = np.diff(pts, prepend=pts[-1]).astype(np.float64) / 2.0**64  # uint64 wraps at 0
    return np.bincount(view.owners, weights=gaps, minlength=view.clusters)


def next_other_owner(view: RingView) -> np.ndarray:
    """For each point j, the index of the first point clockwise after j owned by another
    cluster (so owners[result[j]] is the secondary of keys whose primary point is j)."""
    own = view.owners.tolist()
    n = len(own)
    if view.clusters < 2 or len(set(own)) < 2:
        raise ParamError("clusters: a secondary needs at least two clusters on the ring")
    out = [-1] * n
    for j in range(2 * n - 2, -1, -1):  # two passes resolve the wrap at the end of the ring
        a, b = j % n, (j + 1) % n
        out[a] = b if own[b] != own[a] else out[b]
    return np.array(out, dtype=np.int64)
