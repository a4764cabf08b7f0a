"""Cluster routers compared by the fleet simulator, all deterministic (ties go to the lowest id).

round_robin   next live cluster in turn; blind to load and cache
least_loaded  fewest outstanding requests (queued + prefilling); blind to cache
ring          consistent-hash primary of the request's key; pure affinity
bounded_ring  first cluster clockwise below ceil(c * (total + 1) / live); affinity with a cap
cache_aware   argmax of prefix-match fraction - beta * (load - mean) / max(1, mean), the
              production-stack `loadaware` score, read from each cluster's real prefix cache
"""

from __future__ import annotations

import math

from core.errors import ParamError, check_choice, check_float, check_int
from core.fleet.prefix_index import PrefixIndex, match_all
from core.fleet.ring import ConsistentHashRing, bounded_capacity, hash64


class FleetState:
    """What routers read, owned and updated by the simulator."""

    def __init__(self, caches: list[PrefixIndex]) -> None:
        n = len(caches)
        self.caches = caches
        self.load = [0] * n  # outstanding requests per cluster: queued + prefilling
        self.live = [True] * n
        self.total_load = 0  # sum of load over clusters (dead clusters hold none)
        self.n_live = n

    @property
    def clusters(self) -> int:
        return len(self.caches)


def _no_live_cluster(router: str) -> ParamError:
    return ParamError(f"fleet: no live cluster for router {router!r} to route to")


class Router:
    """Base class: a policy that picks one live cluster per request."""

    name = "router"
    needs_blocks = False  # whether choose() reads the request's block ids

    def choose(self, key: int, blocks: list[int] | None, fleet: FleetState) -> int:
        """Pick a cluster for one request.

        Args:
            key: the request's routing key (session id or first block id).
            blocks: its chained block ids, or None when needs_blocks is False.
            fleet: current loads, liveness and caches; at least one cluster is live.
        Returns:
            The index of a live cluster. Must not change `fleet`.
        """
        raise NotImplementedError

    def set_live(self, cluster: int, alive: bool) -> None:
        """Membership changed: `cluster` failed (alive=False) or rejoined."""


class RoundRobin(Router):
    name = "round_robin"

    def __init__(self) -> None:
        self._next = 0

    def choose(self, key: int, blocks: list[int] | None, fleet: FleetState) -> int:
        live, n = fleet.live, len(fleet.live)
        for step in range(n):  # at most one lap: every cluster is looked at once
            k = (self._next + step) % n
            if live[k]:
                self._next = (k + 1) % n
                return k
        raise _no_live_cluster(self.name)


class LeastLoaded(Router):
    name = "least_loaded"

    def choose(self, key: int, blocks: list[int] | None, fleet: FleetState) -> int:
        best, best_load = -1, math.inf
        for c, (load, alive) in enumerate(zip(fleet.load, fleet.live, strict=True)):
            if alive and load < best_load:
                best, best_load = c, load
        if best < 0:
            raise _no_live_cluster(self.name)
        return best


class PlainRing(Router):
    name = "ring"

    def __init__(self, ring: ConsistentHashRing) -> None:
        self.ring = ring
        self._primary: dict[int, int] = {}  # key -> live primary; cleared on membership change

    def choose(self, key: int, blocks: list[int] | None, fleet: FleetState) -> int:
        c = self._primary.get(key)
        if c is None:
            c = self._primary[key] = self.ring.route_hash(hash64(key))[0]  # type: ignore[assignment]
        return c  # type: ignore[return-value]

    def set_live(self, cluster: int, alive: bool) -> None:
        self.ring.set_alive(cluster, alive)
        self._primary.clear()


class BoundedRing(Router):
    name = "bounded_ring"

    def __init__(self, ring: ConsistentHashRing, c: float = 1.25) -> None:
        self.ring = ring
        self.c = check_float("bound_c", c, 1.0, math.inf)
        self._start: dict[int, int] = {}  # key -> index of its first vnode clockwise

    def choose(self, key: int, blocks: list[int] | None, fleet: FleetState) -> int:
        j = self._start.get(key)
        if j is None:
            j = self._start[key] = self.ring.successor_index(hash64(key))
        live, load, owner_at = fleet.live, fleet.load, self.ring.owner_at
        if fleet.n_live == 0:
            raise _no_live_cluster(self.name)
        cap = (
            math.inf
            if math.isinf(self.c)
            else bounded_capacity(fleet.total_load, fleet.n_live, self.c)
        )
        # NOTE: walking vnodes (repeats included) visits clusters in clockwise order, and the
        # capacities sum to more than the total load, so some live cluster is below its cap.
        for step in range(self.ring.num_points):
            x = owner_at(j + step)
            if live[x] and load[x] < cap:
                return x  # type: ignore[return-value]
        raise AssertionError("bounded capacities always leave room for one more request")

    def set_live(self, cluster: int, alive: bool) -> None:
        self.ring.set_alive(cluster, alive)


class CacheAware(Router):
    name = "cache_aware"
    needs_blocks = True

    def __init__(self, beta: float = 0.5) -> None:
        self.beta = check_float("beta", beta, 0.0, 1e6)

    def choose(self, key: int, blocks: list[int] | None, fleet: FleetState) -> int:
        blocks = blocks or []
        nb, nl, total = len(blocks) or 1, fleet.n_live, fleet.total_load
        # NOTE: the score m/nb - beta*(load - total/nl)/max(1, total/nl), multiplied by
        # nb*max(nl, total) > 0, is m*M - beta*nb*(load*nl - total): integers except beta, so
        # equal scores compare equal (for dyadic beta such as 0.5) and ties go to the lowest id.
        big_m, w = max(nl, total), self.beta * nb
        best, best_score = -1, -math.inf
        matched = match_all(fleet.caches, blocks, fleet.live)
        for c, (m, load) in enumerate(zip(matched, fleet.load, strict=True)):
            if m >= 0:
                score = m * big_m - w * (load * nl - total)
                if score > best_score:
                    best, best_score = c, score
        if best < 0:
            raise _no_live_cluster(self.name)
        return best


ROUTERS = ("round_robin", "least_loaded", "ring", "bounded_ring", "cache_aware")


def make_router(
    name: str, clusters: int, vnodes: int = 128, bound_c: float = 1.25, beta: float = 0.5
) -> Router:
    """A fresh router over clusters 0..clusters-1 (ring routers build their own ring)."""
    check_choice("router", name, ROUTERS)
    clusters = check_int("clusters", clusters, 1, 1024)
    if name == "round_robin":
        return RoundRobin()
    if name == "least_loaded":
        return LeastLoaded()
    if name == "cache_aware":
        return CacheAware(beta)
    ring = ConsistentHashRing(range(clusters), vnodes=vnodes)
    return PlainRing(ring) if name == "ring" else BoundedRing(ring, bound_c)
