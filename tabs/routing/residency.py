"""Figure: per-layer residency over the scored tokens, for stock, routing and both. A cell is
one layer at one token: did its k experts come from memory (green), from a prefetch (blue),
partly or wholly from disk (orange)? Substituted cells are outlined; cells whose prefetch was
evicted unused are hatched."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch, PathPatch
from matplotlib.path import Path

from core.experiments.routing import setting
from core.experiments.routing_grid import DIMS
from core.routing.record import PassRecord, cell_fields
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE

SHOWN = ("stock", "routing", "both")
CLASSES = ("all resident", "all in memory, some loaded ahead", "some read from disk",
           "all read from disk")
# A projector: the same classes in a few words, so the legend's two rows fit the canvas.
SHORT = ("resident", "loaded ahead", "some from disk", "all from disk")
LOOK = Projector(words={**dict(zip(CLASSES, SHORT, strict=True)),
                        "prefetch evicted unused": "wasted prefetch"})
# Normal mode's fixed margins (figure fractions): room for the layer labels on the left, the
# titles above each panel, and the x label and two-row legend below.
GRID = {"left": 0.066, "right": 0.995, "top": 0.962, "bottom": 0.14, "hspace": 0.2}
CMAP = ListedColormap([ROLE["hit"], ROLE["prefetch"], "#F3C19D", ROLE["miss"]])


@dataclass(frozen=True, kw_only=True)
class ResidencyLayout:
    layer_ticks: str  # the layers labelled: "all", or "mla": layer 0 and the MLA layers
    legend_at: dict  # the key's place, under the panels


# A projector: 8 layer labels at 14 pt overlap in a short panel, so only layer 0 and the MLA
# ones; the key outside the panels, where constrained layout makes room.
RESIDENCY = Arrangement(
    normal=ResidencyLayout(layer_ticks="all",
                           legend_at={"loc": "lower center", "bbox_to_anchor": (0.5, 0)}),
    projector=ResidencyLayout(layer_ticks="mla", legend_at={"loc": "outside lower center"}))


def grid(rec: PassRecord, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(class [L, T] index into CLASSES, substituted [L, T], wasted [L, T])."""
    L, T = len(rec.cells), len(rec.cells[0])  # the kept steps
    cls = np.zeros((L, T), np.int64)
    sub = np.zeros((L, T), bool)
    waste = np.zeros((L, T), bool)
    for layer, row in enumerate(rec.cells):
        for t, c in enumerate(row):
            r, p, sb, w = cell_fields(c, k)
            cls[layer, t] = 0 if r == k else 1 if r + p == k else 3 if r + p == 0 else 2
            sub[layer, t], waste[layer, t] = sb, w
    return cls, sub, waste


_SQUARE = np.array([(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5), (-0.5, -0.5)])
_SQUARE_CODES = [Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO, Path.CLOSEPOLY]


def _cells(mask: np.ndarray) -> Path:
    """The True cells of mask as one compound path of unit squares: one artist, drawn in one
    call (a Rectangle per cell cost ~0.3 ms each to build, hundreds per panel at J = 0)."""
    ys, xs = np.nonzero(mask)
    verts = np.column_stack((xs, ys))[:, None, :] + _SQUARE  # [N, 5, 2]
    return Path(verts.reshape(-1, 2), np.tile(_SQUARE_CODES, len(xs)))


def _panel(ax, name: str, label: str, short: str, rec: PassRecord, k: int,
           layer_ticks: str) -> dict[str, float | int]:
    cls, sub, waste = grid(rec, k)
    L, T = cls.shape
    ax.imshow(cls, cmap=CMAP, vmin=-0.5, vmax=3.5, aspect="auto", interpolation="nearest")
    if sub.any():
        ax.add_artist(PathPatch(_cells(sub), facecolor="none", edgecolor=ROLE["reference"],
                               lw=1.1))
    if waste.any():
        ax.add_artist(PathPatch(_cells(waste), facecolor="none", edgecolor=ROLE["waste"],
                               hatch="////", lw=0))
    kinds = [f"{i} {kind.upper()}" for i, kind in enumerate(DIMS.layer_kinds)]
    shown = (list(range(L)) if layer_ticks == "all"
             else [i for i, kind in enumerate(kinds) if i == 0 or kind.endswith("MLA")])
    ax.set_yticks(shown, [kinds[i] for i in shown], fontsize=7.5)
    title = brief(ax, f"{label}: {100 * rec.hit_rate:.0f}% hit over all {rec.positions} steps "
                  f"· here {int(sub.sum())} substituted cells, {int(waste.sum())} wasted "
                  "prefetches", f"{short}: {100 * rec.hit_rate:.0f}% hit · {int(sub.sum())} "
                  f"substituted, {int(waste.sum())} wasted")
    ax.set_ylabel("layer")
    ax.grid(False)
    ax.set_xlim(-0.5, T - 0.5)
    ax.set_title(title, fontsize=9.5)
    return {f"{name}_hit_rate": rec.hit_rate, f"{name}_substituted_cells": int(sub.sum()),
            f"{name}_wasted_cells": int(waste.sum()),
            f"{name}_all_from_disk_cells": int((cls == 3).sum())}


@arranged_by(RESIDENCY)
def routing_residency(M: int, J: int, method: str, alpha: float, capacity: str, *,
                      lay: ResidencyLayout) -> FigureResult:
    s = setting(M, J, method, alpha, capacity)
    arms = s.arms
    k = s.route.k
    metrics: dict[str, float | int | str] = {"capacity": s.capacity, "setting": s.route.label()}
    # normal mode: fixed margins (the grid's): constrained layout costs ~300 ms
    with lab_figure(6.6, look=LOOK, fixed=True) as fig:
        axes = fig.subplots(len(SHOWN), 1, sharex=True, gridspec_kw=GRID)
        for ax, name in zip(axes, SHOWN, strict=True):
            label = {"both": "routing + next-layer prefetch"}.get(name, name)
            short = {"both": "routing + prefetch"}.get(name, name)
            metrics |= _panel(ax, name, label, short, arms[name], k, lay.layer_ticks)
        shown = len(arms["stock"].cells[0])
        # a projector: "over all N steps" moved here from the panel titles
        axes[-1].set_xlabel(brief(axes[-1], f"the first {shown} of {arms['stock'].positions} "
                                  f"scored held-out bytes (one decode step each), {s.words()}, "
                                  f"{s.capacity}-slot cache",
                                  f"decode step: the first {shown} of "
                                  f"{arms['stock'].positions} scored bytes (hit rates over all "
                                  f"{arms['stock'].positions})\n{s.words()}, "
                                  f"{s.capacity}-slot cache"))
        fig.legend(handles=[Patch(color=CMAP(i), label=c) for i, c in enumerate(CLASSES)]
                   + [Patch(facecolor="none", edgecolor=ROLE["reference"], label="substituted"),
                      Patch(facecolor="none", edgecolor=ROLE["waste"], hatch="////",
                            label="prefetch evicted unused")],
                   ncols=3, fontsize=8, **lay.legend_at)
    return FigureResult(fig, metrics)
