"""Tab: Expert cache. Scripted runs of the real ExpertCache: slot map, counters, hit rates."""

from __future__ import annotations

from core.experiments.expert_cache import SLOTS
from core.experts.scenarios import MAX_TOPK, SCENARIOS, STRIDE
from tabs.controls import Choice, Slider
from tabs.spec import FigureSpec, Preset, TabSpec

PARAMS = ("slots", "scenario", "topk", "schedule", "seed")
STEPPED = (*PARAMS, "token")

TAB = TabSpec(
    id="expert_cache",
    title="Expert cache",
    controls=(
        Slider(name="slots", label=f"Slots (budget = slots × {STRIDE:,} B)", minimum=SLOTS[0],
               maximum=SLOTS[1], value=8, demo=6,
               info="The hero: fewer slots, more evictions. Must be at least top-k + 1."),
        Choice("scenario", "Scenario", SCENARIOS, "consume one only", demo="reset window"),
        Slider(name="topk", label="Top-k (experts per token)", minimum=1, maximum=MAX_TOPK, value=4,
               demo=2, max_from="slots", max_offset=-1,
               info="At most slots - 1: follows the slots slider."),
        Slider(name="schedule", label="Schedule length (tokens after the probe)", minimum=4,
               maximum=24, value=12, demo=16),
        Slider(name="seed", label="Routing seed", minimum=0, maximum=99, value=0, demo=7),
        Slider(name="token", label="Show up to token (0: the opening probe)", minimum=0, maximum=24,
               value=12, demo=3, max_from="schedule",
               info="Step through the slot map and its counters; the last "
               "token shows the whole run (chunks under pressure)."),
    ),
    figures=(
        FigureSpec("cache_slot_map", "What the cache does: its slots token by token (state, "
                   "origin, pins, evictions)", "tabs.expert_cache.slot_map:cache_slot_map",
                   STEPPED),
        FigureSpec("cache_hit_rates", "Naive vs exact reuse, window by window",
                   "tabs.expert_cache.hit_rates:cache_hit_rates", PARAMS),
        FigureSpec("cache_counters", "Counters per window at that step: the two ledgers balance",
                   "tabs.expert_cache.counters:cache_counters", STEPPED),
        FigureSpec("cache_scenarios", "Every scenario: where the subtraction goes wrong",
                   "tabs.expert_cache.hit_rates:cache_scenarios", PARAMS),
    ),
    more=("seed",),  # folded under "More controls"
    stepper="token",
    presets=(
        Preset("Step through", "Token 0 only: one batch, then its first expert got k times. "
               "Move the token slider up one token at a time.", {"token": 0}),
        Preset("Prefetched once, used once", "Every prefetch is used once, in its window: the "
               "naive subtraction is right here, and only here.",
               {"scenario": "prefetch then consume"}),
        Preset("Counters reset mid-flight", "Loads counted in one window, used in the next: "
               "the naive aggregate goes wrong.", {"scenario": "reset window"}),
        Preset("A truncated shard", "Short reads publish nothing and claim no bytes.",
               {"scenario": "truncated shard"}),
        Preset("Under pressure", "Too few slots: a miss evicts an expert loaded ahead but "
               "never used.", {"scenario": "pressure", "slots": 5}),
    ),
)
