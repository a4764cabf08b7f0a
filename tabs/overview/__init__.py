"""Tab: Overview. One request's path through the whole lab, from one real run of the engine:
prompt, prefix lookup, prefill, routing and expert loads, draft / verify / replay, and the
fleet ring's choice of cluster, each stage naming the tab that teaches it."""

from __future__ import annotations

from core.experiments.scenes import MAX_CLUSTERS
from core.model.manifest import shipped_dims
from core.serve.limits import MAX_DRAFT, default_slots
from core.serve.prompts import KINDS
from tabs.controls import Check, Choice, Slider
from tabs.spec import FigureSpec, Preset, TabSpec

_d = shipped_dims()
SERVED = ("draft_len", "kind", "capacity", "warm")

TAB = TabSpec(
    id="overview",
    title="Overview",
    controls=(
        Slider(name="draft_len", label="Draft length γ (tokens drafted per verify pass)", minimum=0,
               maximum=MAX_DRAFT, value=4, demo=0,
               info="The hero: 0 is plain greedy decoding; watch the decode stage and the "
                    "expert loads change."),
        Choice("kind", "Prompt (held-out text the model never trained on)", KINDS, "code",
               demo="records"),
        Slider(name="capacity", label="Expert cache slots", minimum=_d.top_k + 1,
               maximum=_d.n_layers * _d.n_experts, value=default_slots(_d)),
        Check("warm", "An earlier request already sent this prompt's first blocks", True,
              demo=False),
        Slider(name="clusters", label="Clusters in the fleet", minimum=2,
               maximum=min(16, MAX_CLUSTERS), value=8, demo=5),
    ),
    figures=(
        FigureSpec("overview_path", "One request's path through the lab, stage by stage",
                   "tabs.overview.path:overview_path", (*SERVED, "clusters")),
        FigureSpec("overview_layers", "The same request layer by layer: routing and expert "
                   "loads", "tabs.overview.layers:overview_layers", SERVED),
    ),
    more=("clusters",),  # folded under "More controls"
    route_after="overview_path",  # each stage's tab opens from a button under its figure
    presets=(
        Preset("Plain greedy decoding", "No drafts: more forward passes, yet fewer experts "
               "loaded from disk.", {"draft_len": 0}),
        Preset("Cold start", "No earlier request: the prefix lookup finds nothing and the whole "
               "prompt is computed.", {"warm": False}),
        Preset("Every expert resident", "A slot for every expert: each one is loaded once, then "
               "always hits.", {"capacity": _d.n_layers * _d.n_experts}),
    ),
)
