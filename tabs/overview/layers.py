"""Figure: the request layer by layer. Left, how often each expert of each layer was picked
(prefill and decode together); right, per layer, the experts fetched from the expert cache and
how many of them had to be loaded from disk, prefill and decode apart."""

from __future__ import annotations

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgba
from matplotlib.patches import Patch

from core.experiments.overview import PHASES, path
from core.model.manifest import shipped_dims as dims
from tabs.figure import FigureResult, Projector, lab_figure
from tabs.palette import ROLE

# Normal mode: the axes where constrained layout put them (heat map, bars, colour bar; the same
# at every setting: tick labels and titles keep their widths). Constrained layout cost ~40% of
# a redraw; presenting keeps it (projector text needs the room found afresh).
POS = {"heat": (0.0677, 0.22635, 0.44834, 0.7177), "bars": (0.63716, 0.22635, 0.35868, 0.7177),
       "cbar": (0.52501, 0.22635, 0.01507, 0.7177)}  # colour bar: height / 20 wide
LOOK = Projector(legends="below")


def _place(fig) -> None:
    heat, bars, cbar = fig.axes
    cbar.set_box_aspect(None)  # POS already gives it its 1:20
    for ax, name in ((heat, "heat"), (bars, "bars"), (cbar, "cbar")):
        ax.set_position(POS[name])


def overview_layers(draft_len: int, kind: str, capacity: int, warm: bool) -> FigureResult:
    p = path(draft_len, kind, capacity, warm, clusters=1)
    picks = np.array(p.picks).sum(0)  # [layer, expert]
    fetched, loads = np.array(p.fetched), np.array(p.loads)  # [phase, layer]
    L, E = picks.shape
    names = [f"{i} {k.upper()}" for i, k in enumerate(p.layer_kinds)]
    with lab_figure(4.2, look=LOOK, place=_place) as fig:
        heat, bars = fig.subplots(1, 2, width_ratios=[1.25, 1])
        im = heat.imshow(picks, cmap="Blues", aspect="auto", vmin=0)
        heat.set_xticks(range(E))
        heat.set_yticks(range(L), names)
        heat.set_xlabel("expert")
        heat.set_ylabel("layer (mixer kind)")
        heat.grid(False)
        heat.set_title(f"Routing: picks per expert ({p.kind}, top-{dims().top_k} per token)",
                       loc="left")
        cb = fig.colorbar(im, ax=heat, fraction=0.05, pad=0.02)
        cb.set_label("tokens that picked the expert")
        y = np.arange(L)
        h = 0.4
        boxes, colours = [], []  # every bar as one collection: one draw call, not 4L patches
        for i, (phase, dy) in enumerate(zip(PHASES, (-h / 2, h / 2), strict=True)):
            alpha = 0.4 if phase == "prefill" else 1  # prefill in pale tints, decode full colour
            for role, x0, x1 in (("miss", 0 * loads[i], loads[i]), ("hit", loads[i], fetched[i])):
                for yl, a, b in zip(y + dy - h / 2, x0, x1, strict=True):
                    boxes.append(((a, yl), (b, yl), (b, yl + h), (a, yl + h)))
                    colours.append(to_rgba(ROLE[role], alpha))
        bars.add_collection(PolyCollection(boxes, facecolors=colours, linewidths=0),
                            autolim=False)
        bars.set_yticks(range(L), names)
        bars.set_ylim(L - 0.5, -0.5)
        bars.set_xlim(0, fetched.max() * 1.05)
        bars.set_xlabel("experts fetched (upper bar: prefill, lower: decode)")
        bars.set_title(f"Expert cache ({p.capacity} slots): fetches per layer", loc="left")
        bars.legend(handles=[Patch(color=ROLE["miss"], alpha=0.4, label="prefill: loaded"),
                             Patch(color=ROLE["hit"], alpha=0.4, label="prefill: resident"),
                             Patch(color=ROLE["miss"], label="decode: loaded from disk"),
                             Patch(color=ROLE["hit"], label="decode: already resident")],
                    loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize=8)
    return FigureResult(fig, {
        "kind": kind, "draft_len": draft_len, "capacity": capacity, "warm": warm,
        "picks_total": int(picks.sum()), "busiest_expert_picks": int(picks.max()),
        "experts_never_picked": int((picks == 0).sum()),
        **{f"{ph}_fetched": int(fetched[i].sum()) for i, ph in enumerate(PHASES)},
        **{f"{ph}_loads": int(loads[i].sum()) for i, ph in enumerate(PHASES)}})
