"""Figure: the hybrid layer pattern, parameters per component, and serving bytes vs K3."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.patches import FancyBboxPatch

from core.errors import check_int
from core.model.info import serving_bytes
from core.model.manifest import shipped_dims as dims
from tabs.axes import plain_log
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE

MB = 1e6
# Normal mode's fixed margins (figure fractions): room for the component names on the left and
# the serving quantities between the two lower panels.
GRID = {"left": 0.1352, "right": 0.9958, "top": 0.9489, "bottom": 0.0969, "wspace": 0.5127,
        "hspace": 0.1518}
# A projector: no legend: the x label names the colours.
LOOK = Projector(legends="hide")


@dataclass(frozen=True, kw_only=True)
class ArchitectureLayout:
    margins: dict[str, float]  # the grid's fixed margins and gaps; {}: constrained layout's
    strip_height: float  # the layer strip's height, the lower panels' being 2.2
    params_width: float  # the parameter panel's width, the serving panel's being 1


# A projector's grid: a shorter strip, the parameter panel a little wider (constrained layout
# places it; GRID's margins give way).
ARCHITECTURE = Arrangement(
    normal=ArchitectureLayout(margins=GRID, strip_height=1, params_width=1),
    projector=ArchitectureLayout(margins={}, strip_height=0.5, params_width=1.15))


def _short(name: str) -> str:
    """A serving quantity's name without its per-layer/per-token scope, for presenting."""
    return name.split(",")[0].removeprefix("one ").replace(" + ", "\n+ ")


def _strip(ax, kinds: tuple[str, ...], layer: int, d) -> None:
    moe = brief(ax, f"MoE {d.n_experts}e top-{d.top_k}\n+ shared", "")  # projector: the title
    for i, kind in enumerate(kinds):
        colour = ROLE["mla"] if kind.upper() == "MLA" else ROLE["kda"]
        ax.add_patch(FancyBboxPatch((i + 0.06, 0.1), 0.88, 0.8, boxstyle="round,pad=0.01",
                                    facecolor=colour, alpha=0.9 if i == layer else 0.35,
                                    edgecolor=ROLE["reference"], lw=2.5 if i == layer else 0.6))
        ax.text(i + 0.5, 0.62, f"{i}: {kind.upper()}", ha="center", va="center", fontsize=9,
                fontweight="bold" if i == layer else "normal")
        ax.text(i + 0.5, 0.32, moe, ha="center", va="center", fontsize=7)
    ax.set_xlim(0, len(kinds))
    ax.set_ylim(0, 1)
    ax.axis("off")
    ax.set_title(brief(ax, f"Layer pattern: {d.mla_every - 1} KDA then 1 MLA, repeated; every "
                       f"FFN is MoE (layer {layer} highlighted)",
                       f"{d.mla_every - 1} KDA, 1 MLA, repeated; MoE FFNs, top-{d.top_k}"))


@arranged_by(ARCHITECTURE)
def model_architecture(layer: int, *, lay: ArchitectureLayout) -> FigureResult:
    d = dims()
    kinds = d.layer_kinds
    check_int("layer", layer, 0, d.n_layers - 1)
    comps = d.components()
    serving = serving_bytes(d)
    # normal mode: fixed margins (what constrained layout found): it cost ~100 ms a redraw
    with lab_figure(4.6, look=LOOK, fixed=True) as fig:
        grid = fig.add_gridspec(2, 2, **lay.margins, height_ratios=[lay.strip_height, 2.2],
                                width_ratios=[lay.params_width, 1])
        _strip(fig.add_subplot(grid[0, :]), kinds, layer, d)
        params, serve = fig.add_subplot(grid[1, 0]), fig.add_subplot(grid[1, 1])
        names = list(comps)
        vals = np.array([comps[n] for n in names], float) * d.bytes_per_param / MB
        y = np.arange(len(names))
        params.barh(y, vals, color=[ROLE["neutral"]] * (len(names) - 1) + [ROLE["replay"]])
        for yi, v in zip(y, vals, strict=True):
            params.text(v, yi, f" {v:.2f}", va="center", fontsize=7.5)
        params.set_yticks(y, names, fontsize=7.5)
        params.invert_yaxis()
        params.set_xlim(0, vals.max() * 1.25)
        params.set_xlabel(brief(params, "MB of float32 weights", "MB (float32)"))
        params.set_title(brief(params, f"Toy model: {d.total_params / 1e6:.2f} M parameters "
                               f"({d.active_params / 1e6:.2f} M active per token)",
                               f"{d.total_params / 1e6:.2f} M parameters, "
                               f"{d.active_params / 1e6:.2f} M active"))
        labels = [brief(serve, f"{x.name}\n(K3 {x.k3_format})", _short(x.name)) for x in serving]
        toy = np.array([x.toy for x in serving], float)
        k3 = np.array([x.k3 for x in serving], float)
        ys = np.arange(len(labels))
        serve.barh(ys - 0.2, toy, 0.4, color=ROLE["kda"], label="toy (float32)")
        serve.barh(ys + 0.2, k3, 0.4, color=ROLE["snapshot"], label="K3")
        serve.set_xscale("log")
        lo, hi = toy.min() / 3, k3.max() * 30  # room for the ratios
        serve.set_xlim(lo, hi)
        plain_log(serve.xaxis, lo, hi)
        for yi, x in zip(ys, serving, strict=True):
            serve.text(x.k3 * 1.2, yi + 0.2, f"{x.ratio:,.1f}×", va="center", fontsize=7.5)
        serve.set_yticks(ys, labels, fontsize=7)
        serve.invert_yaxis()
        serve.set_xlabel(brief(serve, "bytes (log)", "bytes: toy (green), K3 (orange)"))
        serve.set_title(brief(serve, "Serving bytes, toy vs K3 (like for like)",
                              "Serving bytes"), fontsize=10)
        serve.legend(loc="lower right")
    metrics = {
        "layer": layer,
        "layer_kind": kinds[layer],
        "total_params": d.total_params,
        "active_params": d.active_params,
        **{f"{key}_{side}": getattr(x, side)
           for key, x in zip(("expert_bytes", "kda_state_bytes", "kda_state_conv_bytes",
                              "mla_bytes_per_token"), serving, strict=True)
           for side in ("toy", "k3")},
    }
    return FigureResult(fig, metrics)
