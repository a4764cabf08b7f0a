"""Fleet layer: how requests are spread over clusters of serving replicas, and measured honestly.

What it is: a consistent-hash ring with vnodes and bounded loads, per-class admission budgets
(reject or a bounded queue), per-cluster prefix caches, five routers, and a discrete-event
simulator that runs a request trace through them, with one optional cluster failure and
rejoin. Its summaries never put a rejected request into a latency percentile.

Modules
  ring           ConsistentHashRing: placement (blake2b of "<cluster>#<i>"), route, bounded
  ring_arrays    the ring as sorted numpy arrays: the vectorised twin of ring.py for figures
  spread         skew against vnodes, moves on removal, bounded loads; 1/sqrt(V), noise floor
  spread_arrays  the same measurements swept over vnodes and ring draws, on array rings
  budgets        BudgetConfig / BudgetController: weighted concurrency caps per class
  prefix_index   PrefixIndex: a cluster's prefix cache as an LRU index of chained block ids
                 (reuse follows core.prefix's rule), and its list-based twin
  traces         Trace and its seeded generators; mooncake: the Mooncake FAST'25 JSONL format
  routers        round_robin, least_loaded, ring, bounded_ring, cache_aware
  config         SimConfig and the lab's demo presets
  simulator      simulate(trace, config) -> SimResult: the event loop (FleetRun)
  records        Records (one row per offered request), FailoverStats; result: SimResult
  metrics        percentiles, per-class summaries, the seed's sentinel P95 (the wrong way)
  failover       the one recovery time, windowed P95, TTFT before / during / after a failure
  bakeoff        compare_routers, pareto_front
  capacity       load_sweep: goodput and prefill load against offered load, per router, with
                 and without the failure (saturation told apart from failover)

`simulate` is the only function of that name in core (the speculative-decoding session's is
core.speculative.run_session).

Oracles: bisect routing equals a linear-scan twin (naive_route) and the array ring routes every
key like the engine; PrefixIndex equals NaivePrefixIndex; removing one of N clusters moves only
its keys, about 1/N of them, each to its old secondary; bounded loads never exceed
ceil(c x mean); percentiles equal numpy's; the budget's weight in flight, rebuilt from the
records alone, never exceeds the budget; hand-worked TTFTs for the prefill cost model.
"""

from __future__ import annotations

from core.fleet.bakeoff import compare_routers, pareto_front
from core.fleet.budgets import (
    ADMIT,
    CLASSES,
    QUEUE,
    REJECT,
    BudgetConfig,
    BudgetController,
    class_index,
)
from core.fleet.capacity import LoadSweep, load_sweep, prefill_load, rate_trace
from core.fleet.config import DEMO_BUDGET, DEMO_SIM, DEMO_TRACE, SimConfig
from core.fleet.failover import (
    FailoverWindows,
    failover_windows,
    recovery_time,
    short_recovery_time,
    windowed_percentile,
)
from core.fleet.metrics import (
    SEED_SENTINEL,
    ClassSummary,
    LoadStats,
    Summary,
    load_stats,
    naive_p95_by_class,
    naive_p95_with_rejections_as_sentinel,
    percentile,
    percentiles,
    summarize,
    summarize_class,
)
from core.fleet.mooncake import load_mooncake_jsonl, to_mooncake_lines
from core.fleet.prefix_index import NaivePrefixIndex, PrefixIndex
from core.fleet.records import FailoverStats, Records, RequestRecord
from core.fleet.result import SimResult
from core.fleet.ring import ConsistentHashRing, bounded_capacity, hash64, naive_route
from core.fleet.routers import ROUTERS, FleetState, Router, make_router
from core.fleet.simulator import simulate
from core.fleet.spread import (
    BoundedPoint,
    MoveStats,
    SpreadPoint,
    bounded_load_point,
    noise_floor_cv,
    removal_moves,
    ring_spread,
    rule_of_thumb_cv,
    spread_vs_vnodes,
)
from core.fleet.traces import (
    Trace,
    TraceConfig,
    long_burst_trace,
    merge_traces,
    multi_turn_trace,
    poisson_trace,
)

__all__ = [
    "ADMIT",
    "BoundedPoint",
    "BudgetConfig",
    "BudgetController",
    "CLASSES",
    "ClassSummary",
    "ConsistentHashRing",
    "DEMO_BUDGET",
    "DEMO_SIM",
    "DEMO_TRACE",
    "FailoverStats",
    "FailoverWindows",
    "FleetState",
    "LoadStats",
    "LoadSweep",
    "MoveStats",
    "NaivePrefixIndex",
    "PrefixIndex",
    "QUEUE",
    "REJECT",
    "ROUTERS",
    "Records",
    "RequestRecord",
    "Router",
    "SEED_SENTINEL",
    "SimConfig",
    "SimResult",
    "SpreadPoint",
    "Summary",
    "Trace",
    "TraceConfig",
    "bounded_capacity",
    "bounded_load_point",
    "class_index",
    "compare_routers",
    "failover_windows",
    "hash64",
    "load_mooncake_jsonl",
    "load_stats",
    "load_sweep",
    "long_burst_trace",
    "make_router",
    "merge_traces",
    "multi_turn_trace",
    "naive_p95_by_class",
    "naive_p95_with_rejections_as_sentinel",
    "naive_route",
    "noise_floor_cv",
    "pareto_front",
    "percentile",
    "percentiles",
    "poisson_trace",
    "prefill_load",
    "rate_trace",
    "recovery_time",
    "removal_moves",
    "ring_spread",
    "rule_of_thumb_cv",
    "short_recovery_time",
    "simulate",
    "spread_vs_vnodes",
    "summarize",
    "summarize_class",
    "to_mooncake_lines",
    "windowed_percentile",
]
