"""Consistent-hash ring: virtual nodes, primary/secondary routing, dead clusters, bounded loads.

Each cluster sits at `vnodes` points h(cluster ‖ "#" ‖ i) on a 64-bit ring, where h is blake2b
with an 8-byte digest over the UTF-8 text, so every process builds the same ring (Python's
`hash()` is salted per process and is never used). route(key) takes the first point clockwise of
h(key), wrapping at the end: its owner is the primary. The secondary is the owner of the next
point clockwise that belongs to a different live cluster, so it is never the primary, and a key
orphaned by a removed primary lands exactly on its old secondary.

Bounded loads (Mirrokni, Thorup, Zadimoghaddam, arXiv 1608.01350): each live cluster holds at
most ceil(c * (total + 1) / live) keys; a key goes to the first non-full cluster clockwise.
"""

from __future__ import annotations

import bisect
import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence

from core.errors import ParamError, check_float, check_int

RING_SIZE = 1 << 64
MAX_VNODES = 4096

Cluster = int | str


def hash64(key: str | int | bytes) -> int:
    """64-bit ring position: blake2b, 8-byte digest, big-endian, of str(key) in UTF-8 (or bytes)."""
    data = key if isinstance(key, bytes) else str(key).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def vnode_points(cluster: Cluster, vnodes: int) -> list[int]:
    """The ring positions of a cluster's virtual nodes: h(cluster ‖ "#" ‖ i) for i < vnodes."""
    return [hash64(f"{cluster}#{i}") for i in range(vnodes)]


class ConsistentHashRing:
    """Clusters with `vnodes` points each; dead clusters keep their points but are skipped."""

    def __init__(self, clusters: Iterable[Cluster] = (), vnodes: int = 128) -> None:
        self.vnodes = check_int("vnodes", vnodes, 1, MAX_VNODES)
        self._points: list[int] = []  # sorted ring positions
        self._owners: list[Cluster] = []  # _owners[j] owns _points[j]
        self._members: list[Cluster] = []
        self._dead: set[Cluster] = set()
        self._by_text: dict[str, Cluster] = {}  # str(id) -> id: ids must differ as text
        for cluster in clusters:
            self._insert(cluster, "clusters")
        self._rebuild()

    # -- membership -------------------------------------------------------------------------

    @property
    def members(self) -> list[Cluster]:
        return list(self._members)

    @property
    def live(self) -> list[Cluster]:
        return [c for c in self._members if c not in self._dead]

    def add_cluster(self, cluster: Cluster) -> None:
        """Place a new cluster's vnodes; it takes about 1/(N+1) of the keys, all moving to it."""
        self._insert(cluster)
        self._rebuild()

    def remove_cluster(self, cluster: Cluster) -> None:
        """Delete a cluster's points; only the keys it owned move, each to its old secondary."""
        self._require_member(cluster)
        self._members.remove(cluster)
        self._by_text.pop(str(cluster))
        self._dead.discard(cluster)
        self._rebuild()

    def set_alive(self, cluster: Cluster, alive: bool) -> None:
        """Mark a member dead (skipped in both roles, points kept) or alive again."""
        self._require_member(cluster)
        if alive:
            self._dead.discard(cluster)
        else:
            self._dead.add(cluster)

    def is_alive(self, cluster: Cluster) -> bool:
        self._require_member(cluster)
        return cluster not in self._dead

    # -- routing ----------------------------------------------------------------------------

    def route(self, key: str | int | bytes) -> tuple[Cluster, Cluster | None]:
        """(primary, secondary) of a key; secondary is None when only one cluster is alive."""
        return self.route_hash(hash64(key))

    def route_hash(self, h: int) -> tuple[Cluster, Cluster | None]:
        """route() for a precomputed 64-bit key position."""
        points, owners, dead = self._points, self._owners, self._dead
        n = len(points)
        if n == 0 or len(self._dead) == len(self._members):
            raise ParamError("clusters: the ring has no live cluster to route to")
        j = bisect.bisect_left(points, h)
        primary: Cluster | None = None
        for step in range(n):
            owner = owners[(j + step) % n]
            if owner in dead:
                continue
            if primary is None:
                primary = owner
            elif owner != primary:
                return primary, owner
        return primary, None  # type: ignore[return-value]

    def successor_index(self, h: int) -> int:
        """Index of the first vnode clockwise of position h (wrapping); see owner_at()."""
        return bisect.bisect_left(self._points, h) % max(len(self._points), 1)

    def owner_at(self, j: int) -> Cluster:
        """Owner of the j-th vnode clockwise (j taken modulo the number of vnodes)."""
        return self._owners[j % len(self._owners)]

    @property
    def num_points(self) -> int:
        return len(self._points)

    def preference(self, key: str | int | bytes, include_dead: bool = False) -> list[Cluster]:
        """Distinct clusters in clockwise order from the key: primary, secondary, then the rest."""
        return self.preference_hash(hash64(key), include_dead)

    def preference_hash(self, h: int, include_dead: bool = False) -> list[Cluster]:
        points, owners, dead = self._points, self._owners, self._dead
        n = len(points)
        wanted = len(self._members) if include_dead else len(self._members) - len(dead)
        order: list[Cluster] = []
        seen: set[Cluster] = set()
        j = bisect.bisect_left(points, h)
        for step in range(n):
            if len(order) == wanted:
                break
            owner = owners[(j + step) % n]
            if owner in seen or (owner in dead and not include_dead):
                continue
            seen.add(owner)
            order.append(owner)
        return order

    def route_bounded(
        self,
        key: str | int | bytes,
        loads: Mapping[Cluster, int] | Sequence[int],
        c: float = 1.25,
        total: int | None = None,
    ) -> Cluster:
        """First live cluster clockwise whose load is below ceil(c * (total + 1) / live).

        `loads[cluster]` is the cluster's current load (a dict, or a list for int ids) and
        `total` the sum over live clusters (computed when omitted). c = inf is the plain ring.
        """
        c = check_float("c", c, 1.0, math.inf)
        order = self.preference(key)
        if not order:
            raise ParamError("clusters: the ring has no live cluster to route to")
        if math.isinf(c):
            return order[0]
        if total is None:
            total = sum(loads[x] for x in order)  # type: ignore[index]
        cap = bounded_capacity(total, len(order), c)
        for cluster in order:
            if loads[cluster] < cap:  # type: ignore[index]
                return cluster
        raise ParamError(f"loads: no live cluster below capacity {cap}; loads exceed total={total}")

    # -- inspection -------------------------------------------------------------------------

    def points(self) -> list[tuple[int, Cluster]]:
        """(position, owner) for every vnode, sorted by position (dead owners included)."""
        return list(zip(self._points, self._owners, strict=True))

    def keyspace_shares(self) -> dict[Cluster, float]:
        """Fraction of the keyspace routed to each live cluster (dead arcs pass clockwise)."""
        points, owners, dead = self._points, self._owners, self._dead
        n = len(points)
        shares = {c: 0.0 for c in self.live}
        if not shares:
            return shares
        nxt: Cluster | None = None
        for j in range(2 * n - 1, -1, -1):  # two passes so arcs before the first live point wrap
            owner = owners[j % n]
            if owner not in dead:
                nxt = owner
            if j < n:
                gap = (points[j] - points[j - 1]) % RING_SIZE if n > 1 else RING_SIZE
                shares[nxt] += gap / RING_SIZE  # type: ignore[index]
        return shares

    # -- internals --------------------------------------------------------------------------

    def _insert(self, cluster: Cluster, param: str = "cluster") -> None:
        if not isinstance(cluster, (int, str)) or isinstance(cluster, bool):
            raise ParamError(f"{param}: each id must be an int or str, got {cluster!r}")
        if cluster in self._members:
            raise ParamError(f"{param}: cluster {cluster!r} is already on the ring")
        # NOTE: vnode positions hash str(cluster), so ids with the same text (1 and "1") would sit
        # on the very same points, and the tie-break by text would then compare int with str.
        other = self._by_text.get(str(cluster))
        if other is not None:
            raise ParamError(
                f"{param}: id {cluster!r} has the same text as member {other!r}; cluster ids "
                "must differ as text (vnodes are placed by hashing str(id))"
            )
        self._members.append(cluster)
        self._by_text[str(cluster)] = cluster

    def _require_member(self, cluster: Cluster) -> None:
        if cluster not in self._members:
            raise ParamError(f"cluster must be one of {self._members}, got {cluster!r}")

    def _rebuild(self) -> None:
        # NOTE: ties (2**-64 per pair) are broken by the owner's text, so the ring never depends
        # on insertion order.
        placed = sorted((p, str(c), c) for c in self._members for p in vnode_points(c, self.vnodes))
        self._points = [p for p, _, _ in placed]
        self._owners = [c for _, _, c in placed]


def bounded_capacity(total: int, live: int, c: float) -> int:
    """Per-cluster capacity ceil(c * (total + 1) / live) when placing one more key."""
    return math.ceil(c * (total + 1) / live)


def naive_route(ring: ConsistentHashRing, key: str | int | bytes) -> tuple[Cluster, Cluster | None]:
    """Slow twin of route(): sort every point by clockwise distance from h(key), then scan."""
    h = hash64(key)
    live = set(ring.live)
    if not live:
        raise ParamError("clusters: the ring has no live cluster to route to")
    clockwise = sorted(ring.points(), key=lambda po: (po[0] - h) % RING_SIZE)
    owners = [owner for _, owner in clockwise if owner in live]
    primary = owners[0]
    secondary = next((o for o in owners if o != primary), None)
    return primary, secondary
