"""Skew, removal and bounded-load sweeps over array rings: the vectorised twin of spread.py that
the fleet ring figures draw (many vnode counts and ring draws per redraw).

Each sweep equals the engine's slow path exactly (tests/core/fleet/test_ring_arrays.py):
removal_view matches removal_moves, bounded_sweep matches bounded_load_point, and the shares
behind share_sweep match ConsistentHashRing.keyspace_shares.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from core.errors import check_float, check_int
from core.fleet.metrics import load_stats
from core.fleet.ring import ConsistentHashRing
from core.fleet.ring_arrays import (
    DRAW_STRIDE,
    cluster_ids,
    keyspace_shares,
    primary_points,
    ring_view,
    route_counts,
    route_keys,
    session_array,
)


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
    return ShareSweep(vnodes=tuple(vnodes), draws=tuple(draws), cv=cv, max_over_mean=mx)


@dataclass(frozen=True, slots=True, eq=False)
class SessionSweep:
    vnodes: tuple[int, ...]
    cv: np.ndarray  # (len(vnodes),) CV of sessions routed per cluster (shares plus sampling)
    max_over_mean: np.ndarray  # (len(vnodes),)


@lru_cache(maxsize=16)
def session_sweep(
    clusters: int, vnodes: tuple[int, ...], sessions: int, draw: int = 0
) -> SessionSweep:
    """Spread of `sessions` routed keys per cluster at each vnode count, for one ring draw."""
    hashes = session_array(sessions)
    stats = [load_stats(route_counts(ring_view(clusters, v, draw), hashes)) for v in vnodes]
    return SessionSweep(
        vnodes=tuple(vnodes),
        cv=np.array([s.cv for s in stats]),
        max_over_mean=np.array([s.max_over_mean for s in stats]),
    )


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
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

    @property
    def receivers(self) -> int:
        """Clusters that received at least one moved session."""
        return int(np.count_nonzero(self.gained))

    @property
    def largest_receiver_share(self) -> float:
        """The busiest receiver's fraction of the moved sessions (0.0 when none moved)."""
        return float(self.gained.max() / self.moved) if self.moved else 0.0


def removal_view(
    clusters: int, vnodes: int, sessions: int, removed: int = 0, draw: int = 0
) -> RemovalView:
    """Remove one cluster and diff every session's primary, as removal_moves does."""
    check_int("clusters", clusters, 2, DRAW_STRIDE)
    view = ring_view(clusters, vnodes, draw)
    hashes = session_array(sessions)
    before, secondary = route_keys(view, hashes)
    rest = view.without(removed)
    after = rest.owners[primary_points(rest, hashes)]
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
class RemovalSweep:
    vnodes: tuple[int, ...]
    moved_fraction: np.ndarray  # (len(vnodes),) sessions that moved when `removed` left
    removed_share: np.ndarray  # (len(vnodes),) its keyspace share before: the expectation


@lru_cache(maxsize=16)
def removal_sweep(
    clusters: int, vnodes: tuple[int, ...], sessions: int, removed: int = 0, draw: int = 0
) -> RemovalSweep:
    """removal_view at each vnode count, for one ring draw."""
    runs = [removal_view(clusters, v, sessions, removed, draw) for v in vnodes]
    return RemovalSweep(
        vnodes=tuple(vnodes),
        moved_fraction=np.array([r.moved_fraction for r in runs]),
        removed_share=np.array([r.removed_share for r in runs]),
    )


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class BoundedRun:
    c: float
    zipf_s: float
    loads: np.ndarray  # (N,) requests per cluster at the end
    cap: int  # ceil(c * requests / N): the last placement's cap, so no cluster ends above it
    max_over_mean: float
    on_primary: float  # fraction of requests placed on their key's primary

    @property
    def within_cap(self) -> bool:
        """No cluster ended above the final cap (the bound's promise)."""
        return bool(self.loads.max() <= self.cap)


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

