"""Tab: Replay ring. ReplaySSM's raw-input ring streams a speculative session; a snapshot ring
is the baseline."""

from __future__ import annotations

from tabs.controls import Choice, Slider
from tabs.spec import FigureSpec, Preset, TabSpec

MAX_CAPACITY = 32  # the capacity slider's maximum; the bounds panel sweeps L up to it
MAX_STEPS = 48  # the steps slider's maximum (the step slider's too)

SESSION = ("capacity", "draft_len", "accept_rate", "steps", "seed")
STEPPED = (*SESSION, "step")

TAB = TabSpec(
    id="replay_ring",
    title="Replay ring",
    controls=(
        Slider(name="capacity", label="Ring capacity L (raw-input entries)", minimum=4,
               maximum=MAX_CAPACITY, value=12, demo=8,
               info="The hero: a small ring flushes often; the rule is committed + γ + 1 > L."),
        Slider(name="draft_len", label="Draft length γ (tokens drafted per verify pass)", minimum=1,
               maximum=8, value=3, demo=5, info="A step pushes γ + 1 entries."),
        Slider(name="accept_rate", label="Acceptance rate a (per drafted token)", minimum=0.0,
               maximum=1.0, value=0.7, step=0.05, integer=False, demo=0.4),
        Slider(name="steps", label="Verify steps", minimum=4, maximum=MAX_STEPS, value=20, demo=30),
        Slider(name="seed", label="Seed", minimum=0, maximum=99, value=0, demo=7),
        Choice("dtype", "Compute dtype", ("float64", "float32"), "float64", demo="float32"),
        Slider(name="step", label="Show up to verify step", minimum=1, maximum=MAX_STEPS, value=20,
               demo=8, max_from="steps",
               info="Step through the timeline; the layout shows the ring at that step."),
    ),
    figures=(
        FigureSpec("ring_timeline", "Push, commit, rollback and flush timing",
                   "tabs.replay_ring.timeline:ring_timeline", STEPPED),
        FigureSpec("ring_layout", "Window layout at that step: physical slots, start pointer, "
                   "wrap", "tabs.replay_ring.layout:ring_layout", STEPPED),
        FigureSpec("ring_equivalence", "Streaming ring vs batch recurrence",
                   "tabs.replay_ring.equivalence:ring_equivalence", (*SESSION, "dtype")),
        FigureSpec("ring_bandwidth", "Bandwidth ledger: bytes written and read",
                   "tabs.replay_ring.bandwidth:ring_bandwidth", (*SESSION, "dtype")),
    ),
    more=("seed", "dtype"),
    stepper="step",
    presets=(
        Preset("Drafts rarely accepted", "Most windows roll back: the ring commits a little "
               "each step and flushes rarely.", {"accept_rate": 0.1}),
        Preset("Drafts almost always accepted", "Whole windows commit: watch how quickly the "
               "ring fills and flushes.", {"accept_rate": 0.95}),
        Preset("Small ring, long drafts", "Windows nearly as long as the ring: it must flush "
               "almost every step.", {"capacity": 10, "draft_len": 8}),
        Preset("Step through", "Verify step 1: move the step slider up one step at a time and "
               "watch the window fill the ring, then flush.", {"step": 1}),
    ),
)
