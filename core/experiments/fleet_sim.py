"""The Fleet budgets and simulation tab's experiments: core.fleet's simulator on the tab's
scenes, numpy only, cached per parameter set (single-flight). Read-only results.

The budget scene: long_burst_trace's steady shorts (SHORT_RATE for BURST_DURATION s) plus a
burst of long documents in BURST_S, routed cache-blind (BUDGET_ROUTER) so that only the budget
differs between MODES (off, reject, queue).
  budget_config(mode, long_budget)   its SimConfig
  budget_runs(long_burst, long_budget, seed)   one SimResult per MODES entry, one trace
The failover scene: DEMO_SIM (8 clusters; FAIL_CLUSTER fails at fail_at and rejoins cold DOWN_S
later) on a multi-turn trace of rate x TRACE_SECONDS requests.
  fleet_trace(rate, seed), fleet_config(router, fail_at), fleet_run(rate, fail_at, router, seed)
  FAIL_AT, SEED, AT_MAX   the tab's default failure time and trace seed, and the time cursor's
                          maximum (past every arrival at every rate)
  cursor_words(at_s, t_end)   what the failover figures show: up to the cursor, or the whole run
The capacity sweep: the failover scene's trace recipe (seed SEED, failure at FAIL_AT) at every
rate of RATES under every router, healthy and with the failure.
  capacity_sweeps()   (healthy, failing) LoadSweeps, computed once; the app warms it in the
                      background (capacity_sweeps.ready(): cached already)
"""

from __future__ import annotations

from dataclasses import replace

from core.experiments.flight import single_flight
from core.fleet.capacity import SECONDS, LoadSweep, load_sweep, rate_trace
from core.fleet.config import DEMO_BUDGET, DEMO_SIM, DEMO_TRACE, SimConfig
from core.fleet.result import SimResult
from core.fleet.routers import ROUTERS
from core.fleet.simulator import simulate
from core.fleet.traces import Trace, long_burst_trace, multi_turn_trace

MODES = ("off", "reject", "queue")
SHORT_RATE, BURST_S, BURST_DURATION = 40.0, (10.0, 20.0), 30.0
BUDGET_ROUTER = "least_loaded"
TRACE_SECONDS = SECONDS  # requests = rate * TRACE_SECONDS; arrivals span about 50 s
DOWN_S = 15.0
FAIL_AT, SEED = 15, 0
FAIL_CLUSTER = DEMO_SIM.fail_cluster
AT_MAX = 60
# requests / s: the rate slider's 20-80 and beyond; dense where cache-blind routers saturate
# (each point costs 2 x 5 runs of rate x 40 s requests: the sum of the rates sets the cost)
RATES = (20, 40, 60, 70, 80, 100)


def cursor_words(at_s: int, t_end: float) -> str:
    return "whole run" if at_s >= t_end else f"up to t = {at_s} s"


def budget_config(mode: str, long_budget: int) -> SimConfig:
    budget = replace(DEMO_BUDGET, mode=mode, budgets=(DEMO_BUDGET.budgets[0], long_budget))
    return SimConfig(router=BUDGET_ROUTER, budget=budget)


@single_flight(8)
def budget_runs(long_burst: int, long_budget: int, seed: int) -> tuple[SimResult, ...]:
    burst_rate = long_burst / (BURST_S[1] - BURST_S[0])
    trace = long_burst_trace(SHORT_RATE, BURST_DURATION, burst_rate, BURST_S, seed)
    return tuple(simulate(trace, budget_config(m, long_budget)) for m in MODES)


@single_flight(4)
def fleet_trace(rate: int, seed: int) -> Trace:
    return multi_turn_trace(rate_trace(replace(DEMO_TRACE, seed=seed), rate, TRACE_SECONDS))


def fleet_config(router: str, fail_at: int) -> SimConfig:
    return replace(DEMO_SIM, router=router, fail_at=float(fail_at),
                   recover_at=float(fail_at) + DOWN_S)


@single_flight(40)
def fleet_run(rate: int, fail_at: int, router: str, seed: int) -> SimResult:
    return simulate(fleet_trace(rate, seed), fleet_config(router, fail_at))


@single_flight(1)
def capacity_sweeps() -> tuple[LoadSweep, LoadSweep]:
    failing = fleet_config(ROUTERS[0], FAIL_AT)  # load_sweep sets the router of each row
    trace = replace(DEMO_TRACE, seed=SEED)
    return load_sweep(RATES, trace, failing.without_failure()), load_sweep(RATES, trace, failing)
