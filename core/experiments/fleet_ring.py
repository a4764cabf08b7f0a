"""The Fleet ring tab's experiments: consistent hashing with vnodes on the simulator's ring
recipe (core.fleet.ring_arrays), numpy only. Read-only results.

  SWEEP_V, DRAWS, SEED_VNODES, REMOVED   the vnode counts swept, the ring draws behind the
                typical-ring band, the seed demo's ring, the cluster removed (the one the
                simulator fails)
  ring_layout(vnodes, clusters, sessions, seed, arc_bins)   RingLayout: the ring's points and
                owners, each cluster's exact keyspace share and routed sessions, the route of
                session-EXAMPLE_KEY, and the owner of each of arc_bins equal arcs
  C_GRID, PREFIXES, REQUESTS   bounded loads: the capacity factors swept, and the workload
  bounded_sweep_of(zipf_s, clusters, vnodes, seed)   BoundedRuns at every c of C_GRID, then at
                c = inf (the plain ring), one Zipf draw; cached (single-flight)
  bounded_at(zipf_s, c, clusters, vnodes, seed)      the BoundedRun at one c
  bound_over_mean(c, clusters)   ceil(c x mean) / mean: the most any cluster can hold after
                REQUESTS placements
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.experiments.flight import single_flight
from core.fleet.ring import bounded_capacity
from core.fleet.ring_arrays import (
    RingView,
    keyspace_shares,
    primary_points,
    ring_view,
    route_counts,
    route_keys,
    session_array,
)
from core.fleet.spread_arrays import BoundedRun, bounded_sweep

SWEEP_V = (1, 2, 4, 8, 16, 32, 64, 128, 256)
DRAWS = tuple(range(16))
SEED_VNODES = 8
REMOVED = 0
EXAMPLE_KEY = 0  # "session-0" is traced from its position to its primary and secondary
C_GRID = tuple(round(1.0 + 0.1 * i, 2) for i in range(11))
PREFIXES, REQUESTS = 200, 2000


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class RingLayout:
    view: RingView
    shares: np.ndarray  # (N,) exact keyspace share of each cluster
    counts: np.ndarray  # (N,) sessions routed to each cluster (on its primary)
    key: np.ndarray  # (1,) uint64 ring position of session-EXAMPLE_KEY
    primary: int  # its cluster
    secondary: int  # its cluster should the primary fail
    arc_owner: np.ndarray  # (arc_bins,) owner of the point at each arc's centre


def ring_layout(vnodes: int, clusters: int, sessions: int, seed: int, arc_bins: int
                ) -> RingLayout:
    view = ring_view(clusters, vnodes, seed)
    hashes = session_array(sessions)
    key = hashes[EXAMPLE_KEY : EXAMPLE_KEY + 1]
    primaries, secondaries = route_keys(view, key)
    centers = ((np.arange(arc_bins) + 0.5) / arc_bins * 2.0**64).astype(np.uint64)
    return RingLayout(view=view, shares=keyspace_shares(view), counts=route_counts(view, hashes),
                      key=key, primary=int(primaries[0]), secondary=int(secondaries[0]),
                      arc_owner=view.owners[primary_points(view, centers)])


def bound_over_mean(c: float, clusters: int, requests: int = REQUESTS) -> float:
    return bounded_capacity(requests - 1, clusters, c) / (requests / clusters)


@single_flight(32)
def bounded_sweep_of(zipf_s: float, clusters: int, vnodes: int, seed: int
                     ) -> tuple[BoundedRun, ...]:
    return tuple(bounded_sweep(C_GRID + (math.inf,), zipf_s, clusters, vnodes, PREFIXES, REQUESTS,
                               seed, draw=seed))


def bounded_at(zipf_s: float, c: float, clusters: int, vnodes: int, seed: int) -> BoundedRun:
    return bounded_sweep((c,), zipf_s, clusters, vnodes, PREFIXES, REQUESTS, seed, draw=seed)[0]
