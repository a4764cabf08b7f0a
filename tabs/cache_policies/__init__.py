"""Tab: Cache policies. LRU, LFU and Belady replayed over a seeded synthetic routing trace
and over the shipped model's recorded routing."""

from __future__ import annotations

from tabs.controls import Slider
from tabs.spec import FigureSpec, Preset, TabSpec

PARAMS = ("skew", "persistence", "topk", "n_experts", "tokens", "seed")

TAB = TabSpec(
    id="cache_policies",
    title="Cache policies",
    controls=(
        Slider(name="skew", label="Popularity skew s (Zipf exponent)", minimum=0.0, maximum=2.0,
               value=1.0, step=0.1, integer=False, demo=0.3,
               info="The hero: lower skew and LFU, which only counts, falls far behind LRU."),
        Slider(name="persistence",
               label="Persistence (chance a token keeps each expert of the last)", minimum=0.0,
               maximum=0.95, value=0.5, step=0.05, integer=False, demo=0.8),
        Slider(name="topk", label="Top-k (experts per token)", minimum=1, maximum=8, value=4,
               demo=2),
        Slider(name="n_experts", label="Experts per layer E", minimum=16, maximum=128, value=64,
               step=8, demo=32),
        Slider(name="tokens", label="Tokens in the trace", minimum=64, maximum=1024, value=256,
               step=64, demo=512),
        Slider(name="seed", label="Trace seed", minimum=0, maximum=99, value=0, demo=1),
    ),
    figures=(
        FigureSpec("policy_hit_rate_curve", "Hit rate vs capacity: LRU, LFU, Belady",
                   "tabs.cache_policies.hit_rate_curve:policy_hit_rate_curve", PARAMS),
        FigureSpec("policy_trace", "The routing trace: skew and persistence",
                   "tabs.cache_policies.trace:policy_trace", PARAMS),
        FigureSpec("policy_model_curve", "The same policies on the tiny model's real routing",
                   "tabs.cache_policies.model_curve:policy_model_curve", ("tokens",)),
    ),
    more=("n_experts", "tokens", "seed"),  # folded under "More controls"
    presets=(
        Preset("Uniform, independent routing", "No skew, no persistence: the online "
               "policies look alike; only Belady, which sees the future, stands apart.",
               {"skew": 0.0, "persistence": 0.0}),
        Preset("Skewed routing", "Some experts are far more popular: frequency (LFU) starts "
               "to pay.", {"skew": 1.5, "persistence": 0.0}),
        Preset("Sticky routing", "Consecutive tokens reuse their experts: recency (LRU) "
               "now beats frequency and comes close to Belady.",
               {"skew": 0.5, "persistence": 0.9}),
    ),
)
