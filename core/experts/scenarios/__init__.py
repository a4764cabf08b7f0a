"""Scenario presets: scripted, deterministic runs of a real ExpertCache, recorded step by step.

Each preset drives a fixed-mode ExpertCache over the upstream test geometry (one layer of 24
experts of 1,632 B, 12,288-B stride; `geometry`) and returns frozen records for figures
(`records`): the slot map after every step, what moved in it, and each counter window's
CacheStats. `rates` turns a run into the hit rates the figures draw.

  prefetch then consume  the seed's probe, then decode: reset, get_many(top-k), get each
  consume one only       batch the top-k, get the top-1 k times (the seed's altered schedule)
  reset window           the next token's batch is issued before reset_stats
  truncated shard        a private copy cut at expert 20's offset after indexing
  pressure               prefill chunks asking for more experts than slots; hottest one pinned

Oracle: the probe numbers of reference/expert-cache.md section 10 come out of the presets'
opening steps, and the per-window aggregate errors equal hand-worked schedules
(tests/core/experts/test_scenarios.py).
"""

from __future__ import annotations

from core.experts.scenarios.geometry import (
    EXPERT_BYTES,
    MAX_SLOTS,
    MAX_TOPK,
    N_EXPERTS,
    STRIDE,
    check_slots,
    fixture_dir,
    routing,
)
from core.experts.scenarios.presets import SCENARIOS
from core.experts.scenarios.rates import HitRates, RunTotals, pct, run_totals, window_rates
from core.experts.scenarios.records import Cell, ScenarioRun, Step, Window
from core.experts.scenarios.run import clear_cache, run_scenario

__all__ = [
    "EXPERT_BYTES", "MAX_SLOTS", "MAX_TOPK", "N_EXPERTS", "SCENARIOS", "STRIDE", "Cell",
    "HitRates", "RunTotals", "ScenarioRun", "Step", "Window", "check_slots", "clear_cache",
    "fixture_dir", "pct", "routing", "run_scenario", "run_totals", "window_rates",
]
