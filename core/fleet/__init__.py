"""Fleet layer: consistent-hash ring, per-class budgets, prefix caches, routers, simulator.

One concept per module: ring (placement and routing), spread (load vs vnodes, removal moves,
bounded loads), budgets (admission), cache (per-cluster prefix LRU), traces and mooncake
(workloads), routers, records and metrics (honest summaries), config (SimConfig and demo
presets), simulator (the discrete-event loop).
"""

from __future__ import annotations

from core.fleet.budgets import (
    ADMIT,
    CLASSES,
    QUEUE,
    REJECT,
    BudgetConfig,
    BudgetController,
    class_index,
)
from core.fleet.cache import NaivePrefixCache, PrefixCache
from core.fleet.config import DEMO_BUDGET, DEMO_SIM, DEMO_TRACE, SimConfig
from core.fleet.metrics import (
    SEED_SENTINEL,
    ClassSummary,
    LoadStats,
    Summary,
    load_stats,
    naive_p95_with_rejections_as_sentinel,
    percentile,
    percentiles,
    recovery_time,
    summarize,
    summarize_class,
)
from core.fleet.mooncake import load_mooncake_jsonl, to_mooncake_lines
from core.fleet.records import FailoverStats, Records, RequestRecord, SimResult
from core.fleet.ring import ConsistentHashRing, bounded_capacity, hash64, naive_route
from core.fleet.routers import ROUTERS, FleetState, Router, make_router
from core.fleet.simulator import compare_routers, simulate
from core.fleet.spread import (
    BoundedPoint,
    MoveStats,
    SpreadPoint,
    bounded_load_point,
    removal_moves,
    ring_spread,
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
    "FleetState",
    "LoadStats",
    "MoveStats",
    "NaivePrefixCache",
    "PrefixCache",
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
    "hash64",
    "load_mooncake_jsonl",
    "load_stats",
    "long_burst_trace",
    "make_router",
    "merge_traces",
    "multi_turn_trace",
    "naive_p95_with_rejections_as_sentinel",
    "naive_route",
    "percentile",
    "percentiles",
    "poisson_trace",
    "recovery_time",
    "removal_moves",
    "ring_spread",
    "simulate",
    "spread_vs_vnodes",
    "summarize",
    "summarize_class",
    "to_mooncake_lines",
]
