"""Goodput against offered load: how much traffic a fleet serves within its SLO, per router.

rate_trace(trace, rate, seconds) is one trace recipe at one arrival rate: rate x seconds requests
of `trace` arriving at `rate` per second (the fleet tab's failover scene is this recipe at its
slider's rate). load_sweep() simulates it at every rate under every router and keeps, per run:

  offered_rps    requests offered per second over the arrival span: goodput's denominator, so
                 goodput equals it exactly when every request completes within its SLO (below
                 `rate`: a multi-turn trace ramps up while its first sessions start)
  goodput_rps    requests per second that completed within their class's SLO (Summary)
  slo_attainment goodput / offered
  hit_rate       prefix-cache token hit rate of the admitted requests
  short_p95_s    P95 TTFT of the admitted short requests
  prefill_load   the utilisation of the fleet's prefill slots at that rate: rate x the mean
                 prefill time of an admitted request (SimConfig.prefill_s at its reused tokens)
                 over slots x clusters. Above 1 the queues can only grow, whatever the router
                 does next: the fleet is saturated (and close below 1 queueing already shows).
                 The prefill time falls as the hit rate rises (a reused token costs hit_cost of
                 a computed one), so a router's capacity, the rate at which its prefill_load
                 reaches 1, is set by its hit rate. It counts the whole fleet, so with a failure
                 it understates the load on the survivors while a cluster is down.

Sweeping the same config with and without its failure (SimConfig.without_failure) tells the two
causes of a slow fleet apart: saturation bends both curves, failover only the one with the
failure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from core.errors import ParamError, check_choice, check_float
from core.fleet.config import DEMO_SIM, DEMO_TRACE, SimConfig
from core.fleet.result import SimResult
from core.fleet.routers import ROUTERS
from core.fleet.simulator import simulate
from core.fleet.traces import TraceConfig, multi_turn_trace

SECONDS = 40.0  # requests = rate x SECONDS; a multi-turn trace's arrivals then span ~50 s


def rate_trace(trace: TraceConfig, rate: float, seconds: float = SECONDS) -> TraceConfig:
    """`trace` at `rate` requests per second, with rate x seconds requests."""
    rate = check_float("rate", rate, 1e-3, 1e6)
    seconds = check_float("seconds", seconds, 1e-3, 1e6)
    return replace(trace, n_requests=max(1, round(rate * seconds)), rate=rate)


def prefill_load(result: SimResult, rate: float) -> float:
    """rate x mean prefill seconds per admitted request / (slots x clusters); NaN if none."""
    rate = check_float("rate", rate, 0.0, 1e9)
    rec, cfg = result.records, result.config
    adm = rec.admitted
    if not adm.any():
        return math.nan
    work = cfg.prefill_s(rec.prompt_tokens[adm], rec.reused_tokens[adm])  # (admitted,) seconds
    return rate * float(np.mean(work)) / (cfg.slots * cfg.clusters)


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class LoadSweep:
    """One run per (router, rate); every array is (len(routers), len(rates)) unless noted."""

    rates: tuple[float, ...]  # arrival rate of each column, requests/s
    routers: tuple[str, ...]  # one row each
    failure: bool  # whether the config's cluster failure happened in these runs
    offered_rps: np.ndarray  # (len(rates),) requests offered per second over the arrival span
    goodput_rps: np.ndarray
    slo_attainment: np.ndarray
    hit_rate: np.ndarray
    short_p95_s: np.ndarray
    prefill_load: np.ndarray

    def row(self, router: str) -> int:
        return self.routers.index(check_choice("router", router, self.routers))  # type: ignore[arg-type]


@lru_cache(maxsize=8)
def load_sweep(
    rates: tuple[float, ...],
    trace: TraceConfig = DEMO_TRACE,
    config: SimConfig = DEMO_SIM,
    routers: tuple[str, ...] = ROUTERS,
    seconds: float = SECONDS,
) -> LoadSweep:
    """Simulate rate_trace(trace, r, seconds) under each router at each rate r, with `config`
    (its failure included, if it has one). Deterministic; cached by its arguments."""
    if not rates:
        raise ParamError("rates must hold at least one arrival rate")
    if not routers:
        raise ParamError("routers must name at least one router")
    for r in routers:
        check_choice("router", r, ROUTERS)
    traces = [multi_turn_trace(rate_trace(trace, r, seconds)) for r in rates]
    shape = (len(routers), len(rates))
    good, slo, hit, p95, load = (np.empty(shape) for _ in range(5))
    for a, router in enumerate(routers):
        cfg = replace(config, router=router)
        for b, tr in enumerate(traces):
            res = simulate(tr, cfg)
            s = res.summary
            good[a, b], slo[a, b] = s.overall.goodput_rps, s.overall.slo_attainment
            hit[a, b], p95[a, b] = s.hit_rate, s.by_class("short").p95
            load[a, b] = prefill_load(res, rates[b])
    return LoadSweep(
        rates=tuple(float(r) for r in rates),
        routers=tuple(routers),
        failure=config.fail_cluster is not None,
        offered_rps=np.array([t.n / t.duration for t in traces]),
        goodput_rps=good,
        slo_attainment=slo,
        hit_rate=hit,
        short_p95_s=p95,
        prefill_load=load,
    )
