"""The Cache-aware routing tab's shared reads: the precomputed sweep, the setting behind the
controls (validated, naming the control), and the colours of arms, methods and slot kinds."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from core.errors import ParamError
from core.model.weights import dims_of, read_manifest
from core.routing import RouteConfig
from core.routing.disk import DISKS
from core.routing.record import PassRecord
from core.routing.sweep import (
    ALPHAS,
    DEFAULT,
    TAB_METHODS,
    CapacitySweep,
    capacities,
    lam_of,
    load,
    tab_route,
    windows,
)
from tabs.palette import ROLE

DIMS = dims_of(read_manifest())  # the shipped model's shape; no weights are loaded
CAPACITIES = capacities(DIMS)
WINDOWS = windows(DIMS)
DISK_NAMES = tuple(DISKS)
ARM_NAMES = ("stock", "routing", "prefetch", "both")
ARM_COLOUR = {"stock": ROLE["reference"], "routing": ROLE["rejected"],
              "prefetch": ROLE["prefetch"], "both": ROLE["replay"]}
# One look per family of settings, on every figure: max_rank keeping the top expert (J = 1),
# max_rank free to swap it (J = 0), and cache_prior (which never keeps a rank sacred).
FAMILY_STYLE = {
    "max_rank J=1": {"color": ROLE["replay"], "marker": "o", "ls": "-"},
    "max_rank J=0": {"color": ROLE["rejected"], "marker": "s", "ls": "--"},
    "cache_prior": {"color": ROLE["waste"], "marker": "D", "ls": "-."},
}
KIND_COLOUR = {"stock": ROLE["reference"], "sacred": ROLE["reference"],
               "resident fill": ROLE["hit"], "backfill": ROLE["miss"]}

__all__ = ["ALPHAS", "ARM_COLOUR", "ARM_NAMES", "CAPACITIES", "DEFAULT", "DIMS",
           "DISK_NAMES", "FAMILY_STYLE", "KIND_COLOUR", "TAB_METHODS", "WINDOWS", "Setting",
           "family", "lam_of", "setting", "sweep"]


@functools.cache
def sweep(capacity: int) -> CapacitySweep:
    """Read-only: the precomputed sweep at one capacity (assets/routing)."""
    return load(capacity)


@dataclass(frozen=True, kw_only=True)
class Setting:
    """The controls, validated, and what they select."""

    method: str
    M: int
    J: int
    alpha: float
    capacity: int
    route: RouteConfig
    sweep: CapacitySweep

    @property
    def arms(self) -> dict[str, PassRecord]:
        return self.sweep.arms(self.route)

    def words(self) -> str:
        """The setting in a few words, for titles."""
        if self.route.stock:
            return "stock top-k (no substitutes)"
        if self.method == "cache_prior":
            return f"cache_prior λ = {self.route.lam:.2f}"
        a = "" if self.alpha == 1.0 else f", α = {self.alpha:g}"
        return f"max_rank J = {self.J}, M = {self.M}{a}"


def capacity_of(capacity: object) -> int:
    """The capacity control's value (a choice, sent as text) as slots."""
    names = [str(c) for c in CAPACITIES]
    if str(capacity) not in names:
        raise ParamError(f"capacity must be one of {names}, got {capacity!r}")
    return int(str(capacity))


def setting(M: int, J: int, method: str, alpha: float, capacity: object) -> Setting:
    """Validate the controls against the sweep's grid (ParamError names the control)."""
    if M not in WINDOWS:
        raise ParamError(f"M must be one of {list(WINDOWS)}, got {M!r}")
    if J not in range(DIMS.top_k + 1):
        raise ParamError(f"J must be in [0, {DIMS.top_k}], got {J!r}")
    if method not in TAB_METHODS:
        raise ParamError(f"method must be one of {list(TAB_METHODS)}, got {method!r}")
    if alpha not in ALPHAS:
        raise ParamError(f"alpha must be one of {list(ALPHAS)}, got {alpha!r}")
    cap = capacity_of(capacity)
    route = tab_route(method, M, J, float(alpha), DIMS)
    return Setting(method=method, M=M, J=J, alpha=float(alpha), capacity=cap, route=route,
                   sweep=sweep(cap))


def family(method: str, J: int) -> str:
    """The FAMILY_STYLE key of a setting (J = k is stock and belongs to no family)."""
    return "cache_prior" if method == "cache_prior" else f"max_rank J={J}"
