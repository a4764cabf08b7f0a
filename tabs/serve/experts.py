"""Figure: the expert cache as this request left it: which of each layer's experts are
resident, which the last token used, and each layer's hit rate so far (decode)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch, Rectangle

from core.experiments.serve import final
from core.serve.live import ServeSnapshot
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE

# A projector: no key (the title names the colour and the outline): the rows keep the height
# of a count written in them.
LOOK = Projector(legends="hide")


@dataclass(frozen=True, kw_only=True)
class ExpertsLayout:
    count_in: str  # each layer's hit count: at the "left" of its row, or in its "longer" bar


# a projector: its larger count fits only in the longer of the two bars
LEFT_FITS = 0.2  # the least hit rate whose bar holds its count at the left

EXPERTS = Arrangement(normal=ExpertsLayout(count_in="left"),
                      projector=ExpertsLayout(count_in="longer"))


def _experts(snap: ServeSnapshot, lay: ExpertsLayout) -> FigureResult:
    held = np.array(snap.resident, dtype=float)  # [L, E]
    L, E = held.shape
    hits, misses = np.array(snap.hits), np.array(snap.misses)
    gets = hits + misses
    rate = np.divide(hits, gets, out=np.zeros(L), where=gets > 0)
    with lab_figure(3.6, look=LOOK) as fig:
        ax, bx = fig.subplots(1, 2, width_ratios=[2.2, 1])
        ax.imshow(held, cmap=ListedColormap([ROLE["empty"], ROLE["hit"]]), vmin=0, vmax=1,
                  aspect="auto", interpolation="nearest")
        for layer, used in enumerate(snap.last_used):
            for e in used:
                ax.add_patch(Rectangle((e - 0.5, layer - 0.5), 1, 1, fill=False,
                                       edgecolor=ROLE["reference"], lw=2.2))
        ax.grid(False)
        ax.set_xticks(range(E))
        ax.set_yticks(range(L))
        ax.set_xlabel("routed expert")
        ax.set_ylabel("layer")
        title = f"{int(held.sum())} of {L * E} experts resident"
        ax.set_title(brief(ax, f"{title}; outlined: the last position's",
                           f"{title} (green); outlined: the last position's"), loc="left")
        ax.legend(handles=[Patch(color=ROLE["hit"], label="resident"),
                           Patch(facecolor="white", edgecolor=ROLE["reference"], lw=2,
                                 label="used by the last position routed")],
                  loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
        bx.barh(range(L), 100 * rate, color=ROLE["hit"])
        bx.barh(range(L), 100 * (1 - rate), left=100 * rate, color=ROLE["miss"])
        for layer in range(L):
            # at the left while the hit bar holds the count, else in the miss bar (at 14% a
            # "19/140" ran out of its bar: the Method body preset)
            left = rate[layer] >= (LEFT_FITS if lay.count_in == "left" else 0.5)
            bx.text(2 if left else 98, layer, f"{hits[layer]}/{gets[layer]}",
                    ha="left" if left else "right", va="center", fontsize=8, color="white")
        bx.set_ylim(L - 0.5, -0.5)
        bx.set_yticks(range(L))
        bx.set_xlim(0, 100)
        bx.set_xlabel("% of experts needed (hit | miss)")
        bx.set_title(f"hit rate {100 * hits.sum() / max(gets.sum(), 1):.0f}% while decoding",
                     loc="left")
    metrics = {"resident": int(held.sum()), "decode_hits": int(hits.sum()),
               "decode_misses": int(misses.sum()), "generated_bytes": len(snap.text)}
    metrics.update({f"hit_rate_layer{i}": round(float(r), 6) for i, r in enumerate(rate)})
    return FigureResult(fig, metrics)


@arranged_by(EXPERTS)
def draw_experts(snap: ServeSnapshot, *, lay: ExpertsLayout) -> FigureResult:
    """A snapshot of a run, as the run streams (RunSpec.draws)."""
    return _experts(snap, lay)


@arranged_by(EXPERTS)
def serve_experts(prompt: str, n_new: int, draft_len: int, capacity: int, prefix_cache: bool,
                  routing: bool, *, lay: ExpertsLayout) -> FigureResult:
    return _experts(final(prompt=prompt, n_new=n_new, draft_len=draft_len, capacity=capacity,
                          prefix_cache=prefix_cache, routing=routing), lay)
