"""Measurements on a bare ring: load skew against vnodes, keys moved on removal, bounded loads.

Skew: a cluster's keyspace share is a sum of V arc gaps, so its coefficient of variation is about
1/sqrt(V) (rule_of_thumb_cv, carried by each SpreadPoint beside the measured numbers). Counting S
routed sessions adds sampling noise on top: even a perfectly fair ring shows a CV of about
sqrt((N - 1) / S) (noise_floor_cv), so a sample must be large enough to see the skew through it.
Session keys are the deterministic strings "session-<i>", so every number here is reproducible
without a seed; only bounded_load_point draws (Zipf popularity) and takes one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from core.errors import check_float, check_int
from core.fleet.metrics import load_stats
from core.fleet.ring import ConsistentHashRing, hash64


@lru_cache(maxsize=4)
def session_hashes(sessions: int) -> tuple[int, ...]:
    """Ring positions of the keys "session-0" .. "session-<sessions - 1>"."""
    check_int("sessions", sessions, 1, 10_000_000)
    return tuple(hash64(f"session-{i}") for i in range(sessions))


def rule_of_thumb_cv(vnodes: int) -> float:
    """1 / sqrt(V): the CV of a share made of V exponential arc gaps (a Gamma(V) variable)."""
    return 1.0 / math.sqrt(check_int("vnodes", vnodes, 1))


def noise_floor_cv(clusters: int, sessions: int) -> float:
    """sqrt((N - 1) / S): the CV of per-cluster counts from sampling alone on a perfectly fair ring.

    S keys thrown uniformly at N clusters give multinomial counts; each count's variance is
    S (1/N)(1 - 1/N), so E[CV^2] over the N counts (std with ddof 0, over the mean S/N) is exactly
    (N - 1) / S.
    """
    clusters = check_int("clusters", clusters, 1)
    sessions = check_int("sessions", sessions, 1)
    return math.sqrt((clusters - 1) / sessions)


@dataclass(frozen=True, slots=True, kw_only=True)
class SpreadPoint:
    clusters: int
    vnodes: int
    sessions: int
    max_over_mean: float  # sessions routed per cluster
    min_over_mean: float
    cv: float
    share_cv: float  # CV of the exact keyspace shares (no sampling noise)
    rule_of_thumb: float  # 1 / sqrt(vnodes)


def ring_spread(clusters: int = 8, vnodes: int = 128, sessions: int = 40_000) -> SpreadPoint:
    """Route `sessions` keys to primaries and measure the spread of the per-cluster counts."""
    clusters = check_int("clusters", clusters, 1, 1024)
    ring = ConsistentHashRing(range(clusters), vnodes=vnodes)
    counts = np.zeros(clusters, dtype=np.int64)
    route = ring.route_hash
    for h in session_hashes(check_int("sessions", sessions, 1, 10_000_000)):
        counts[route(h)[0]] += 1
    stats = load_stats(counts)
    shares = np.array(list(ring.keyspace_shares().values()))
    return SpreadPoint(
        clusters=clusters,
        vnodes=ring.vnodes,
        sessions=sessions,
        max_over_mean=stats.max_over_mean,
        min_over_mean=stats.min_over_mean,
        cv=stats.cv,
        share_cv=float(shares.std() / shares.mean()),
        rule_of_thumb=rule_of_thumb_cv(ring.vnodes),
    )


def spread_vs_vnodes(
    vnodes: tuple[int, ...] = (8, 32, 128, 512), clusters: int = 8, sessions: int = 40_000
) -> list[SpreadPoint]:
    return [ring_spread(clusters, v, sessions) for v in vnodes]


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveStats:
    clusters: int
    removed: int
    moved: int  # keys whose primary changed
    moved_fraction: float
    expected_fraction: float  # the removed cluster's share before removal (about 1/N)
    only_removed_moved: bool  # every moved key had the removed cluster as primary
    to_old_secondary: float  # fraction of moved keys that landed on their old secondary


def removal_moves(
    clusters: int = 8, vnodes: int = 128, sessions: int = 40_000, removed: int = 0
) -> MoveStats:
    """Remove one cluster and compare every key's primary before and after."""
    clusters = check_int("clusters", clusters, 2, 1024)
    removed = check_int("removed", removed, 0, clusters - 1)
    ring = ConsistentHashRing(range(clusters), vnodes=vnodes)
    hashes = session_hashes(check_int("sessions", sessions, 1, 10_000_000))
    before = [ring.route_hash(h) for h in hashes]
    share = ring.keyspace_shares()[removed]
    ring.remove_cluster(removed)
    after = [ring.route_hash(h)[0] for h in hashes]
    moved = [(b, a) for b, a in zip(before, after, strict=True) if b[0] != a]
    return MoveStats(
        clusters=clusters,
        removed=removed,
        moved=len(moved),
        moved_fraction=len(moved) / len(hashes),
        expected_fraction=share,
        only_removed_moved=all(b[0] == removed for b, _ in moved),
        to_old_secondary=sum(b[1] == a for b, a in moved) / len(moved) if moved else 1.0,
    )


@dataclass(frozen=True, slots=True)
class BoundedPoint:
    c: float
    zipf_s: float
    max_over_mean: float  # final per-cluster load
    on_primary: float  # fraction of requests placed on their key's primary


def bounded_load_point(
    c: float = 1.25,
    zipf_s: float = 1.0,
    clusters: int = 8,
    vnodes: int = 100,
    prefixes: int = 200,
    requests: int = 2000,
    seed: int = 0,
) -> BoundedPoint:
    """Place `requests` cumulatively (loads only grow) by bounded-load routing of Zipf prefixes."""
    c = check_float("c", c, 1.0, math.inf)
    zipf_s = check_float("zipf_s", zipf_s, 0.0, 10.0)
    clusters = check_int("clusters", clusters, 1, 1024)
    prefixes = check_int("prefixes", prefixes, 1, 1_000_000)
    requests = check_int("requests", requests, 1, 10_000_000)
    rng = np.random.default_rng(check_int("seed", seed, 0))
    weights = np.arange(1, prefixes + 1, dtype=np.float64) ** -zipf_s
    keys = rng.choice(prefixes, requests, p=weights / weights.sum()).tolist()
    ring = ConsistentHashRing(range(clusters), vnodes=vnodes)
    loads = [0] * clusters
    on_primary = 0
    for total, key in enumerate(keys):
        k = ring.route_bounded(f"prefix-{key}", loads, c, total)
        on_primary += k == ring.route(f"prefix-{key}")[0]
        loads[k] += 1  # type: ignore[index]
    return BoundedPoint(
        c=c,
        zipf_s=zipf_s,
        max_over_mean=load_stats(loads).max_over_mean,
        on_primary=on_primary / requests,
    )
