"""Tab: Expert cache. Scripted runs of the real ExpertCache: slot map, counters, hit rates."""

from __future__ import annotations

from core.experts.scenarios import MAX_TOPK, SCENARIOS
from tabs.controls import Choice, Slider
from tabs.expert_cache.common import SLOTS
from tabs.expert_cache.counters import cache_counters
from tabs.expert_cache.hit_rates import cache_hit_rates
from tabs.expert_cache.slot_map import cache_slot_map
from tabs.spec import Preset, FigureSpec, TabSpec

PARAMS = ("slots", "scenario", "topk", "schedule", "seed")

TAB = TabSpec(
    id="expert_cache",
    title="Expert cache",
    controls=(
        SLOTS,
        Choice("scenario", "Scenario", SCENARIOS, "prefetch then consume", demo="reset window"),
        Slider("topk", "Top-k (experts per token)", 1, MAX_TOPK, 4, demo=2, max_from="slots",
               max_offset=-1, info="At most slots - 1: follows the slots slider."),
        Slider("schedule", "Schedule length (tokens after the probe)", 4, 24, 12, demo=16),
        Slider("seed", "Routing seed", 0, 99, 0, demo=7),
    ),
    figures=(
        FigureSpec("cache_slot_map", "Slot map over time: state, origin, pins, evictions",
                   cache_slot_map, PARAMS),
        FigureSpec("cache_counters", "Counters per window: the two ledgers balance",
                   cache_counters, PARAMS),
        FigureSpec("cache_hit_rates", "Raw vs aggregate vs exact hit rates",
                   cache_hit_rates, PARAMS),
    ),
    presets=(
        Preset("Prefetched once, used once", "The naive aggregate counts reuse that never "
               "happened: compare it with the exact counters.",
               {"scenario": "consume one only"}),
        Preset("Counters reset mid-flight", "Loads counted in one window, used in the next: "
               "the naive aggregate goes wrong.", {"scenario": "reset window"}),
        Preset("A truncated shard", "Short reads publish nothing and claim no bytes.",
               {"scenario": "truncated shard"}),
        Preset("Under pressure", "Too few slots: a miss evicts an expert loaded ahead but "
               "never used.", {"scenario": "pressure", "slots": 5}),
    ),
)
