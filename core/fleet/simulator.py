"""Discrete-event fleet simulator (heapq): budgets, routing, prefix caches, failure and recovery.

Model (each simplification is an optimism a figure should name):
  * Arrivals come from a Trace (open loop). Each passes the BudgetController (fleet-wide, per
    class), then the router picks a cluster.
  * A cluster runs `slots` prefills at once, FIFO behind them. Prefill takes
    (prompt - hit) / prefill_tok_s + hit * hit_cost / prefill_tok_s; the first token comes one
    decode step later; the request holds its budget until output_len decode steps have run.
    Decode does not slow prefill, and batching is not modelled.
  * hit = the engine's reuse rule (core.prefix.rule.usable_blocks): the leading cached blocks of
    the prompt on that cluster, rounded down to the KDA checkpoint stride, and short of the whole
    prompt (one token must run for the logits), times 512. The prompt's blocks enter the cache
    when its prefill starts.
  * At fail_at the cluster dies: its cache is lost, its queued and prefilling requests are
    re-routed at once (requeued; TTFT still counts from their arrival), and requests already past
    their first token are counted as interrupted: their decode ends at the failure (finish), they
    free their budget units then, and the summary counts them as SLO misses (their TTFT stays in
    the percentiles: the first token was delivered). Ring routers send its keys to their
    secondaries, which are cold for them. At recover_at it rejoins with an empty cache.

simulate() runs event_loop.FleetRun (one method per step of the loop), then reads its columns
into Records, its load samples into a (bins, clusters) array, and its failure counters into
FailoverStats.
"""

from __future__ import annotations

import numpy as np

from core.errors import ParamError
from core.fleet.config import SimConfig
from core.fleet.event_loop import FleetRun
from core.fleet.failover import short_recovery_time
from core.fleet.metrics import summarize
from core.fleet.records import FailoverStats, Records
from core.fleet.result import SimResult
from core.fleet.traces import Trace


def simulate(trace: Trace, config: SimConfig | None = None) -> SimResult:
    """Run one trace through the fleet; deterministic for a given trace and config."""
    cfg = config or SimConfig()
    if not isinstance(trace, Trace) or trace.n == 0:
        raise ParamError("trace must be a non-empty Trace")
    run = FleetRun(trace, cfg)
    run.run()
    records = _records(run)
    return SimResult(
        config=cfg,
        records=records,
        summary=summarize(records, cfg.slo_s, cfg.clusters),
        load_times=run.load_times,
        load_series=_load_series(run),
        failover=_failover_stats(run, records),
        duration_s=trace.duration,
    )


# -- outputs --------------------------------------------------------------------------------


def _records(run: FleetRun) -> Records:
    trace = run.trace
    return Records(
        arrival=trace.arrival.copy(),
        klass=trace.klass.copy(),
        session=trace.session.copy(),
        prompt_tokens=trace.prompt_len.copy(),
        admitted=np.array(run.admitted, dtype=bool),
        deferred=np.array(run.deferred, dtype=bool),
        cluster=np.array(run.cluster, dtype=np.int32),
        admitted_at=np.array(run.admit_t, dtype=np.float64),
        start=np.array(run.start_t, dtype=np.float64),
        ttft=np.array(run.ttft, dtype=np.float64),
        finish=np.array(run.finish_t, dtype=np.float64),
        reused_tokens=np.array(run.reused, dtype=np.int64),
        on_primary=np.array(run.on_primary, dtype=bool),
        requeued=np.array(run.requeued, dtype=bool),
        interrupted=np.array(run.interrupted, dtype=bool),
        moved=np.array(run.moved, dtype=bool),
    )


def _load_series(run: FleetRun) -> np.ndarray:
    """(bins, clusters) outstanding requests at each of load_times."""
    bins = len(run.load_times)
    return np.array(run.series[:bins], dtype=np.int64).reshape(bins, run.cfg.clusters)


def _failover_stats(run: FleetRun, records: Records) -> FailoverStats | None:
    cfg = run.cfg
    if cfg.fail_cluster is None or cfg.fail_at is None:
        return None
    t_end = cfg.recover_at if cfg.recover_at is not None else run.arrival[-1]
    return FailoverStats(
        cluster=cfg.fail_cluster,
        fail_at=float(cfg.fail_at),
        recover_at=cfg.recover_at,
        sessions_bound=run.num_bound,
        sessions_moved=run.num_moved,
        cache_lost_tokens=run.lost_tokens,
        requeued=run.num_requeued,
        interrupted=run.num_interrupted,
        recovery_time_s=short_recovery_time(
            records, float(cfg.fail_at), t_end, cfg.recovery_window_s
        ),
    )
