"""Cached simulator runs shared by the fleet simulation figures (keyed by plain params)."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from core.fleet.capacity import SECONDS, rate_trace
from core.fleet.config import DEMO_BUDGET, DEMO_SIM, DEMO_TRACE, SimConfig
from core.fleet.result import SimResult
from core.fleet.routers import ROUTERS
from core.fleet.simulator import simulate
from core.fleet.traces import Trace, long_burst_trace, multi_turn_trace

MODES = ("off", "reject", "queue")
# One colour and marker per router wherever routers are compared (ROUTERS order): warm for the
# cache-blind routers, blues for the ring routers, green for cache_aware.
ROUTER_COLORS = dict(zip(ROUTERS, ("#CC79A7", "#D55E00", "#0072B2", "#56B4E9", "#009E73"),
                         strict=True))
ROUTER_MARKERS = dict(zip(ROUTERS, ("o", "s", "^", "v", "D"), strict=True))
CLASS_COLORS = {"short": "#56B4E9", "long": "#0072B2"}
# The budget scene: long_burst_trace's steady shorts plus a burst of long documents.
SHORT_RATE, BURST_S, BURST_DURATION = 40.0, (10.0, 20.0), 30.0
BUDGET_ROUTER = "least_loaded"  # cache-blind, so the figure isolates the budget's effect
# The failover scene: DEMO_SIM (8 clusters, cluster 0 fails) on a multi-turn trace.
TRACE_SECONDS = SECONDS  # requests = rate * TRACE_SECONDS; arrivals span about 50 s
DOWN_S = 15.0  # the failed cluster rejoins (cold) this long after it fails
FAIL_AT, SEED = 15, 0  # the tab's default failure time and trace seed
FAIL_CLUSTER = DEMO_SIM.fail_cluster
AT_MAX = 60  # the time cursor's maximum (s): past every arrival at every rate


def cursor_words(at_s: int, t_end: float) -> str:
    """What the failover figures show, plainly: up to the cursor, or (a cursor at or past the
    end of the trace) the whole run."""
    return "whole run" if at_s >= t_end else f"up to t = {at_s} s"


def budget_config(mode: str, long_budget: int) -> SimConfig:
    budget = replace(DEMO_BUDGET, mode=mode, budgets=(DEMO_BUDGET.budgets[0], long_budget))
    return SimConfig(router=BUDGET_ROUTER, budget=budget)


@lru_cache(maxsize=8)
def budget_runs(long_burst: int, long_budget: int, seed: int) -> tuple[SimResult, ...]:
    """One SimResult per MODES entry, all on the same long-burst trace."""
    burst_rate = long_burst / (BURST_S[1] - BURST_S[0])
    trace = long_burst_trace(SHORT_RATE, BURST_DURATION, burst_rate, BURST_S, seed)
    return tuple(simulate(trace, budget_config(m, long_budget)) for m in MODES)


@lru_cache(maxsize=4)
def fleet_trace(rate: int, seed: int) -> Trace:
    return multi_turn_trace(rate_trace(replace(DEMO_TRACE, seed=seed), rate, TRACE_SECONDS))


def fleet_config(router: str, fail_at: int) -> SimConfig:
    return replace(DEMO_SIM, router=router, fail_at=float(fail_at),
                   recover_at=float(fail_at) + DOWN_S)


@lru_cache(maxsize=40)
def fleet_run(rate: int, fail_at: int, router: str, seed: int) -> SimResult:
    return simulate(fleet_trace(rate, seed), fleet_config(router, fail_at))
