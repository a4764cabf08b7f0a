"""Tab: Prefix cache. Reuse is only as deep as the last complete, ready KDA checkpoint: a
two-stage lookup, its presets, and the spacing staircase, on a real engine."""

from __future__ import annotations

from core.experiments.scenes import MAX_LOOKUP_STEPS, PRESETS, SPACINGS
from tabs.controls import Choice, Slider
from tabs.spec import FigureSpec, LiveSpec, Preset, TabSpec

TAB = TabSpec(
    id="prefix",
    title="Prefix cache",
    controls=(
        Slider(name="checkpoint_every",
               label="Checkpoint spacing k (a KDA checkpoint group every k blocks)",
               minimum=SPACINGS[0], maximum=SPACINGS[-1], value=1, demo=3,
               info="The hero: sparser checkpoints cost fewer pages but reuse less."),
        Choice("preset", "Request preset", PRESETS, "hit", demo="partial",
               info="hit: shares 8 blocks · miss: shares nothing · fallback: its checkpoint "
                    "was evicted · partial: its checkpoint lost a layer"),
        Slider(name="step", label="Show up to lookup step", minimum=1, maximum=MAX_LOOKUP_STEPS,
               value=MAX_LOOKUP_STEPS, demo=4, max_of="core.experiments.prefix:lookup_steps",
               max_params=("checkpoint_every", "preset"),
               info="Step through the lookup; the maximum shows every step and the prefill."),
    ),
    figures=(
        FigureSpec("prefix_lookup", "The two-stage lookup, step by step",
                   "tabs.prefix.lookup:prefix_lookup", ("checkpoint_every", "preset", "step")),
        FigureSpec("prefix_presets", "Every preset: reuse, why it stopped, same logits as cold?",
                   "tabs.prefix.presets:prefix_presets", ("checkpoint_every", "preset")),
        FigureSpec("prefix_spacing", "Checkpoint spacing vs reusable tokens vs memory",
                   "tabs.prefix.spacing:prefix_spacing", ("checkpoint_every",)),
    ),
    live=LiveSpec("prefix_time_saved", "Prefill time saved, measured live on this machine",
                  "tabs.prefix.live:prefix_time_saved", ("checkpoint_every", "preset")),
    stepper="step",
    presets=(
        Preset("Evicted checkpoint", "The newest checkpoint is gone: the lookup backs off to "
               "an older one.", {"preset": "fallback"}),
        Preset("Partial checkpoint", "One KDA layer is missing from the group: it must not "
               "be used.", {"preset": "partial"}),
        Preset("Sparse checkpoints", "A checkpoint every few blocks: less memory, fewer "
               "reusable tokens.", {"checkpoint_every": 4}),
        Preset("Step through a fallback", "Step 1 of an evicted checkpoint's lookup: move the "
               "step slider up and watch stage 2 back off.", {"preset": "fallback", "step": 1}),
    ),
)
