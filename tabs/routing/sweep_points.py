"""The sweep's settings as points: one curve (a method and J as the window M sweeps, at one
alpha) or every distinct setting at a capacity."""

from __future__ import annotations

from dataclasses import dataclass

from core.routing.record import PassRecord
from core.routing.sweep import ALPHAS, TAB_METHODS, CapacitySweep, lam_of, tab_route
from tabs.routing.common import DIMS, WINDOWS


@dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    method: str
    J: int
    M: int
    alpha: float
    lam: float
    record: PassRecord  # the routing arm (no prefetch); stock at M = k


def curve(sw: CapacitySweep, method: str, J: int, alpha: float) -> list[Point]:
    """Points for M = k..E (M = k is the stock point)."""
    out = []
    for M in WINDOWS:
        route = tab_route(method, M, J, alpha, DIMS)
        rec = sw.arms(route)["routing"]
        lam = lam_of(M, DIMS) if method == "cache_prior" else 0.0
        out.append(Point(method=method, J=J, M=M, alpha=alpha, lam=lam, record=rec))
    return out


def every_setting(sw: CapacitySweep) -> list[Point]:
    """Each distinct routed setting once (stock first)."""
    seen: dict[str, Point] = {}
    for method in TAB_METHODS:
        for J in range(DIMS.top_k + 1):
            for alpha in ALPHAS:
                for p in curve(sw, method, J, alpha):
                    key = tab_route(method, p.M, J, alpha, DIMS).label()
                    seen.setdefault(key, p)
    return list(seen.values())
