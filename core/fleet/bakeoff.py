"""The router bake-off: one trace and config under every router, and the Pareto front of the
results (lower P95 TTFT and higher hit rate are both better)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from core.errors import check_choice
from core.fleet.config import SimConfig
from core.fleet.result import SimResult
from core.fleet.routers import ROUTERS
from core.fleet.simulator import simulate
from core.fleet.traces import Trace


def compare_routers(
    trace: Trace, config: SimConfig | None = None, routers: tuple[str, ...] = ROUTERS
) -> dict[str, SimResult]:
    """The same trace and config under each router, in the order given."""
    cfg = config or SimConfig()
    for r in routers:
        check_choice("router", r, ROUTERS)
    return {r: simulate(trace, replace(cfg, router=r)) for r in routers}


def pareto_front(cost: np.ndarray, gain: np.ndarray) -> np.ndarray:
    """Mask of points no other point beats: lower-or-equal cost and higher-or-equal gain,
    strictly better in one."""
    cost, gain = np.asarray(cost, dtype=np.float64), np.asarray(gain, dtype=np.float64)
    le = (cost[None, :] <= cost[:, None]) & (gain[None, :] >= gain[:, None])
    lt = (cost[None, :] < cost[:, None]) | (gain[None, :] > gain[:, None])
    return ~np.any(le & lt, axis=1)
