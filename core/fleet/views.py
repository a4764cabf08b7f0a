"""Array views of the fleet layer for figures: a ring as sorted numpy arrays, vectorised routing,
keyspace shares, skew against vnodes, removal diffs, bounded-load sweeps, windowed percentiles
and Pareto fronts.

Each view equals the engine's slow path exactly (tests/core/fleet/test_views.py): ring_view(n, v)
routes every key like ConsistentHashRing(range(n), v), removal_view matches removal_moves, and
bounded_sweep matches bounded_load_point.

A ring "draw" d names cluster k by the integer d * DRAW_STRIDE + k, so draw 0 is the simulator's
ring and every other draw is an independent placement of the same N clusters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from core.errors import ParamError, check_float, check_int
from core.fleet.metrics import load_stats, percentile
from core.fleet.ring import MAX_VNODES, ConsistentHashRing, vnode_points
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
        return RingView(self.clusters, self.vnodes, self.points[keep], self.owners[keep])


def ring_view(clusters: int, vnodes: int, draw: int = 0) -> RingView:
    vnodes = check_int("vnodes", vnodes, 1, MAX_VNODES)
    ids = cluster_ids(clusters, draw)
    upto = math.ceil(vnodes / _HASH_CHUNK) * _HASH_CHUNK
    pts = np.concatenate([_cluster_points(c, upto)[:vnodes] for c in ids])  # (N*V,)
    owners = np.repeat(np.arange(len(ids), dtype=np.int64), vnodes)
    # NOTE: the engine breaks exact position ties by owner text; a tie has probability
    # about (N*V)^2 / 2^65 and is ignored here.
    order = np.argsort(pts, kind="stable")
    return RingView(len(ids), vnodes, pts[order], owners[order])


def primary_points(view: RingView, hashes: np.ndarray) -> np.ndarray:
    """Index of each key's first point clockwise (bisect_left, wrapping at the end)."""
    return np.searchsorted(view.points, hashes, side="left") % view.points.size


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


@dataclass(frozen=True, slots=True, eq=False)
class ShareSweep:
    vnodes: tuple[int, ...]
    draws: tuple[int, ...]
    cv: np.ndarray  # (draws, len(vnodes)) CV of the exact keyspace shares
    max_over_mean: np.ndarray  # (draws, len(vnodes))


@lru_cache(maxsize=16)
def share_sweep(clusters: int, vnodes: tuple[int, ...], draws: tuple[int, ...]) -> ShareSweep:
    """Exact keyspace-share skew of independent ring draws at each vnode count."""
    cv = np.empty((len(draws), len(vnodes)))
    mx = np.empty_like(cv)
    for a, d in enumerate(draws):
        for b, v in enumerate(vnodes):
            s = load_stats(keyspace_shares(ring_view(clusters, v, d)))
            cv[a, b], mx[a, b] = s.cv, s.max_over_mean
    return ShareSweep(tuple(vnodes), tuple(draws), cv, mx)


@dataclass(frozen=True, slots=True, eq=False)
class RemovalView:
    removed: int
    before: np.ndarray  # (N,) sessions per cluster before the removal
    after: np.ndarray  # (N,) after; the removed cluster holds 0
    gained: np.ndarray  # (N,) moved sessions each cluster received
    moved: int
    moved_fraction: float
    removed_share: float  # the removed cluster's keyspace share before (the exact expectation)
    only_removed_moved: bool  # every moved key had the removed cluster as primary
    to_old_secondary: float  # fraction of moved keys that landed on their old secondary


def removal_view(
    clusters: int, vnodes: int, sessions: int, removed: int = 0, draw: int = 0
) -> RemovalView:
    """Remove one cluster and diff every session's primary, as removal_moves does."""
    check_int("clusters", clusters, 2, DRAW_STRIDE)
    view = ring_view(clusters, vnodes, draw)
    hashes = session_array(sessions)
    j = primary_points(view, hashes)
    before = view.owners[j]
    secondary = view.owners[next_other_owner(view)[j]]
    after = view.without(removed).owners[primary_points(view.without(removed), hashes)]
    moved = before != after
    n_moved = int(moved.sum())
    return RemovalView(
        removed=removed,
        before=np.bincount(before, minlength=clusters),
        after=np.bincount(after, minlength=clusters),
        gained=np.bincount(after[moved], minlength=clusters),
        moved=n_moved,
        moved_fraction=n_moved / hashes.size,
        removed_share=float(keyspace_shares(view)[removed]),
        only_removed_moved=bool(np.all(before[moved] == removed)),
        to_old_secondary=float((after[moved] == secondary[moved]).mean()) if n_moved else 1.0,
    )


@dataclass(frozen=True, slots=True, eq=False)
class BoundedRun:
    c: float
    zipf_s: float
    loads: np.ndarray  # (N,) requests per cluster at the end
    cap: int  # ceil(c * requests / N): the last placement's cap, so no cluster ends above it
    max_over_mean: float
    on_primary: float  # fraction of requests placed on their key's primary


def bounded_sweep(
    cs: tuple[float, ...],
    zipf_s: float,
    clusters: int = 8,
    vnodes: int = 100,
    prefixes: int = 200,
    requests: int = 2000,
    seed: int = 0,
    draw: int = 0,
) -> list[BoundedRun]:
    """bounded_load_point for each c over one Zipf draw (c = inf: the plain ring)."""
    zipf_s = check_float("zipf_s", zipf_s, 0.0, 10.0)
    prefixes = check_int("prefixes", prefixes, 1, 1_000_000)
    requests = check_int("requests", requests, 1, 10_000_000)
    rng = np.random.default_rng(check_int("seed", seed, 0))
    weights = np.arange(1, prefixes + 1, dtype=np.float64) ** -zipf_s
    keys = rng.choice(prefixes, requests, p=weights / weights.sum()).tolist()
    ids = cluster_ids(clusters, draw)
    ring = ConsistentHashRing(ids, vnodes=vnodes)
    base = ids[0]
    prefs = {k: [x - base for x in ring.preference(f"prefix-{k}")] for k in set(keys)}  # type: ignore[operator]
    order = [prefs[k] for k in keys]
    runs = []
    for c in cs:
        c = check_float("c", c, 1.0, math.inf)
        loads = [0] * clusters
        on_primary = 0
        for total, pref in enumerate(order):
            if math.isinf(c):
                k = pref[0]
            else:
                cap = math.ceil(c * (total + 1) / clusters)
                k = next(x for x in pref if loads[x] < cap)
            on_primary += k == pref[0]
            loads[k] += 1
        final_cap = math.ceil(c * requests / clusters) if not math.isinf(c) else requests
        runs.append(
            BoundedRun(
                c=c,
                zipf_s=zipf_s,
                loads=np.array(loads, dtype=np.int64),
                cap=final_cap,
                max_over_mean=load_stats(loads).max_over_mean,
                on_primary=on_primary / requests,
            )
        )
    return runs


def windowed_percentile(
    t: np.ndarray, values: np.ndarray, edges: np.ndarray, q: float = 95.0
) -> np.ndarray:
    """Percentile q of values whose t falls in [edges[i], edges[i + 1]); NaN for empty windows."""
    t, values = np.asarray(t, dtype=np.float64), np.asarray(values, dtype=np.float64)
    bins = np.searchsorted(edges, t, side="right") - 1
    out = np.full(len(edges) - 1, np.nan)
    for i in range(len(edges) - 1):
        w = values[bins == i]
        if w.size:
            out[i] = percentile(w, q)
    return out


def pareto_front(cost: np.ndarray, gain: np.ndarray) -> np.ndarray:
    """Mask of points no other point beats: lower-or-equal cost and higher-or-equal gain,
    strictly better in one."""
    cost, gain = np.asarray(cost, dtype=np.float64), np.asarray(gain, dtype=np.float64)
    le = (cost[None, :] <= cost[:, None]) & (gain[None, :] >= gain[:, None])
    lt = (cost[None, :] < cost[:, None]) | (gain[None, :] > gain[:, None])
    return ~np.any(le & lt, axis=1)
