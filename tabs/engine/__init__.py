"""Tab: Engine. Speculative decoding against draft length on three prompt kinds, the step
timeline of one request with the bytes each rollback moved, and context parallelism's
communication against MLA's ring, on the lab's real engine."""

from __future__ import annotations

from core.experiments.scenes import GAMMAS
from core.serve.prompts import KINDS
from tabs.controls import Choice, Slider
from tabs.engine.common import MAX_PASSES, RANKS
from tabs.spec import FigureSpec, LiveSpec, Preset, TabSpec

TAB = TabSpec(
    id="engine",
    title="Engine",
    controls=(
        Slider(name="draft_len", label="Draft length γ (tokens drafted per verify pass)",
               minimum=GAMMAS[0], maximum=GAMMAS[-1], value=4, demo=8,
               info="The hero: longer guesses are accepted less often but yield more per pass."),
        Choice("kind", "Prompt kind (held-out text the model never trained on)", KINDS, "code",
               demo="prose"),
        Slider(name="ranks", label="Context-parallel ranks P", minimum=RANKS[0], maximum=RANKS[1],
               value=8, demo=32, info="The prompt is split into P segments, one per rank."),
        Slider(name="step", label="Show up to verify pass", minimum=1, maximum=MAX_PASSES,
               value=MAX_PASSES, demo=5, max_of="core.experiments.engine:passes",
               max_params=("draft_len", "kind"),
               info="Step through the request's timeline; the maximum shows every pass."),
    ),
    figures=(
        FigureSpec("engine_acceptance", "Drafts accepted and bytes per verify pass vs draft "
                   "length", "tabs.engine.acceptance:engine_acceptance", ("draft_len", "kind")),
        FigureSpec("engine_timeline", "One request, pass by pass: draft, verify, accept, replay",
                   "tabs.engine.timeline:engine_timeline", ("draft_len", "kind", "step")),
        FigureSpec("engine_cp", "Context parallelism: KDA state messages vs MLA ring attention",
                   "tabs.engine.context:engine_cp", ("ranks",)),
    ),
    stepper="step",
    presets=(
        Preset("Long guesses", "The longest drafts: the fewest verify passes, but most drafted "
               "bytes are thrown away and rolled back.", {"draft_len": GAMMAS[-1]}),
        Preset("Records", "JSON records repeat their keys but not their values: fewer drafts "
               "are accepted than on code.", {"kind": "records"}),
        Preset("Many ranks", "More ranks: each KDA layer gathers more state messages, so the "
               "crossover moves to longer prompts.", {"ranks": RANKS[1] // 2}),
        Preset("Step through", "Verify pass 1: move the pass slider up one pass at a time and "
               "watch drafts accepted, rejected and replayed.", {"step": 1}),
    ),
    live=LiveSpec("engine_speedup", "Speculative vs plain greedy, measured live on this machine",
                  "tabs.engine.live:engine_speedup", ("draft_len", "kind")),
)
