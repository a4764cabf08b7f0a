"""Tab: Cache-aware routing. The two levers of disk-streamed MoE on the tiny model, closed
loop: routing (take a resident expert instead of a cold one; changes the output) and
prefetch (load the next layer's experts ahead; changes only placement). Every figure reads
the precomputed sweep (assets/routing, rebuilt by `python -m core.experiments.routing_sweep`);
the rank strip runs select_experts live."""

from __future__ import annotations

from core.experiments.routing_grid import (
    ALPHAS,
    CAPACITIES,
    DEFAULT,
    DIMS,
    TAB_METHODS,
    WINDOWS,
)
from core.routing.disk import DISKS
from tabs.controls import Choice, Slider
from tabs.spec import FigureSpec, LiveSpec, Preset, TabSpec

SETTING = ("M", "J", "method", "alpha", "capacity")

TAB = TabSpec(
    id="routing",
    title="Routing",
    controls=(
        Slider(name="M", label="Window M: how far down the router's ranking a resident "
               "expert may be taken from",
               minimum=WINDOWS[0], maximum=WINDOWS[-1], value=DEFAULT["M"],
               step=WINDOWS[1] - WINDOWS[0], demo=WINDOWS[-1],
               info=f"The hero: M = {DIMS.top_k} is stock routing (the top {DIMS.top_k}, "
                    f"nothing swapped); a wider window buys cache hits and costs quality."),
        Slider(name="J", label="Kept ranks J: the top J experts are always taken, resident or "
               "not",
               minimum=0, maximum=DIMS.top_k, value=DEFAULT["J"], demo=0),
        Choice("method", "Method", TAB_METHODS, DEFAULT["method"], demo="cache_prior",
               info="max_rank: take resident experts from the window · cache_prior: lift "
                    f"resident experts' scores by λ = (M − {DIMS.top_k}) / "
                    f"{DIMS.n_experts - DIMS.top_k}"),
        Slider(name="alpha", label="α: a swapped-in expert's weight is scaled by α (max_rank)",
               minimum=ALPHAS[0], maximum=ALPHAS[-1], value=DEFAULT["alpha"],
               step=ALPHAS[1] - ALPHAS[0], integer=False, demo=ALPHAS[0]),
        Choice("capacity", f"Expert cache (slots; the model has {DIMS.n_layers * DIMS.n_experts} "
               f"experts)", tuple(str(c) for c in CAPACITIES), str(CAPACITIES[1]),
               demo=str(CAPACITIES[0])),
        Choice("disk", "Disk (assumed, for modelled time)", tuple(DISKS), "NVMe", demo="HDD"),
    ),
    figures=(
        FigureSpec("routing_arms", "Four arms: what routing and prefetch buy, and what they cost",
                   "tabs.routing.arms:routing_arms", SETTING),
        FigureSpec("routing_io", "Four arms: what they read from disk, and how long it takes",
                   "tabs.routing.arms:routing_io", (*SETTING, "disk")),
        FigureSpec("routing_rank_strip", "One token, one layer: which experts are chosen, and why",
                   "tabs.routing.strip:routing_rank_strip", SETTING),
        FigureSpec("routing_frontier", "The frontier: hit rate against quality, every setting",
                   "tabs.routing.frontier:routing_frontier", SETTING),
        FigureSpec("routing_meters",
                   "Your meters agree with each other; only the output says which swaps cost",
                   "tabs.routing.meters:routing_meters", SETTING),
        FigureSpec("routing_residency", "Residency per layer over the tokens",
                   "tabs.routing.residency:routing_residency", SETTING),
        FigureSpec("routing_predictors", "Prefetch predictors: recall and waste per layer",
                   "tabs.routing.predictors:routing_predictors", SETTING),
    ),
    live=LiveSpec("routing_speed", "Modelled tokens/s, with compute measured live on this machine",
                  "tabs.routing.live:routing_speed", (*SETTING, "disk")),
    more=("alpha", "disk"),  # folded under "More controls"
    folded=("routing_meters", "routing_residency", "routing_predictors"),  # 4 figures up front
    presets=(
        Preset("Swap the top expert too", "J = 0: nothing is sacred; watch the hit rate and "
               "the quality cost both jump.", {"J": 0}),
        Preset("The prior instead of a window", "cache_prior ranks on score plus a bonus for "
               "residency; compare its frontier with max_rank's.", {"method": "cache_prior"}),
        Preset("A small cache", "Sixteen slots, an eighth of the experts: every lever matters "
               "more.", {"capacity": "16"}),
        Preset("Reading from a hard disk", "Loads are slow: the live panel shows whether "
               "prefetching still pays.", {"disk": "HDD"}),
    ),
)
