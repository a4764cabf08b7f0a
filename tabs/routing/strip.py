"""Figure: the rank strip of one token and one layer. Every expert by router rank, coloured by
residency; J and the window M marked (cache_prior: each resident's score lifted by its
bonus); the chosen k with their kind; and the weights before and after alpha and the
renormalisation, against stock's."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text

from core.experiments.routing import choice, setting
from tabs.axes import plain_log
from tabs.figure import (
    Arrangement,
    FigureResult,
    Projector,
    arranged_by,
    brief,
    lab_figure,
    layout_edge,
)
from tabs.palette import ROLE
from tabs.routing.common import KIND_COLOUR

# Normal mode places the panels by hand where constrained layout put them (figure fractions,
# checked over every slider setting): the y tick labels, titles and x labels never move the
# margins. Only a note written left-aligned right of its dashed line (max_rank at M = 12) can reach
# past the panel's right edge: then both panels narrow until it ends at the layout edge
# (tabs.figure.layout_edge), as constrained layout's did.
LEFT, WIDTH = 0.058448, 0.937385
TOP_Y, TOP_H, BOTTOM_Y, BOTTOM_H = 0.487666, 0.475614, 0.039935, 0.317076
# A projector: both keys in one legend under the panels (in them, they covered the notes and
# the weights' values), the notes on the strip in fewer words.
LOOK = Projector(legends="below")


@dataclass(frozen=True, kw_only=True)
class StripLayout:
    kind_lift: float  # a chosen expert's kind: its baseline, x its bar's score
    kind_stack: float | None  # None: each kind by its bar alone; else above the kind to its left
    note_y: float  # the notes' (J, M, λ) baseline, in router score
    strip_top: float  # the strip's score axis top


# A projector: a thicker outline and wider words, so a kind stacks above the last one, and the
# notes and the axis top go above the kinds stacked.
STRIP = Arrangement(
    normal=StripLayout(kind_lift=1.5, kind_stack=None, note_y=1.6, strip_top=8),
    projector=StripLayout(kind_lift=1.8, kind_stack=3.2, note_y=2.4, strip_top=12))


def _place(fig, top, bottom) -> None:
    width = WIDTH
    for ax in (top, bottom):
        ax.set_position([LEFT, TOP_Y if ax is top else BOTTOM_Y, WIDTH,
                         TOP_H if ax is top else BOTTOM_H])
    renderer = fig.canvas.get_renderer()
    edge = layout_edge(fig)
    lo, hi = top.get_xlim()
    for text in top.texts:
        if type(text) is not Text:  # the cache_prior lift arrows: inside the panel
            continue
        end = text.get_window_extent(renderer).x1 / fig.bbox.width
        if end > edge:  # its right end is LEFT + at * width + tail (tail: its own width)
            at = (text.get_position()[0] - lo) / (hi - lo)
            width = min(width, (edge - LEFT - (end - LEFT - at * WIDTH)) / at)
    if width < WIDTH:
        for ax in (top, bottom):
            x0, y0, _, h = ax.get_position().bounds
            ax.set_position([x0, y0, width, h])


def _strip(ax, scores: np.ndarray, res: np.ndarray, order: np.ndarray, chosen: dict, s,
           lift: float, lay: StripLayout) -> None:
    E, k = len(scores), s.route.k
    by_rank = scores[order]
    floor = 10 ** math.floor(math.log10(max(by_rank.min(), 1e-9)))
    colours = [ROLE["hit"] if res[e] else ROLE["empty"] for e in order]
    ax.bar(np.arange(E), by_rank - floor, 0.7, bottom=floor, color=colours,
           edgecolor=[ROLE["hit"] if res[e] else ROLE["neutral"] for e in order], lw=0.8)
    last = (-2, 0.0, 0)  # the last kind written: its rank, height and lines
    for r, e in enumerate(order):
        if int(e) in chosen:
            kind = chosen[int(e)]
            ax.bar(r, by_rank[r] - floor, 0.7, bottom=floor, fill=False,
                   edgecolor=ROLE["reference"], lw=2.6)
            y = by_rank[r] * lay.kind_lift
            if lay.kind_stack is not None:  # above the last kind, if that is just left
                y = max(y, last[1] * lay.kind_stack ** last[2] if last[0] == r - 1 else 0)
            word = kind.replace(" ", "\n")
            ax.text(r, y, word, ha="center", va="bottom",
                    fontsize=9, fontweight="bold", color=KIND_COLOUR[kind])
            last = (r, y, word.count("\n") + 1)
    note = lay.note_y
    if s.route.method == "cache_prior":
        for r, e in enumerate(order):
            if res[e]:
                ax.annotate("", xy=(r, by_rank[r] * math.exp(lift)), xytext=(r, by_rank[r]),
                            arrowprops={"arrowstyle": "-|>", "color": ROLE["hit"], "lw": 1.2})
        lifted = f"each resident lifted ×{math.exp(lift):.3g}"
        ax.text(E - 0.5, note, brief(ax, f"ranks on log score + λ·range·resident: {lifted} "
                                    f"(λ = {s.route.lam:.2f})", lifted), ha="right",
                va="bottom", fontsize=8.5)
    elif not s.route.stock:
        for x, word in ((s.J - 0.5, brief(ax, f"J = {s.J}: ranks left of here are sacred",
                                          f"J = {s.J}")),
                        (s.M - 0.5, brief(ax, f"window M = {s.M}: substitutes come from left of "
                                          "here", f"window M = {s.M}"))):
            ax.axvline(x, color=ROLE["annotation"], ls="--", lw=1.2)
            ax.text(x + 0.1, note, word, fontsize=8.5, va="bottom",
                    ha="left" if x < E / 2 else "right" if x > E - 4 else "left")
    else:
        ax.axvline(k - 0.5, color=ROLE["annotation"], ls="--", lw=1.2)
        ax.text(k - 0.4, note, f"stock: the true top-{k}", fontsize=8.5, va="bottom")
    ax.set_yscale("log")
    ax.set_ylim(floor, lay.strip_top)
    plain_log(ax.yaxis, floor, 1)
    ax.set_xticks(np.arange(E), [f"{r}\ne{int(e)}" for r, e in enumerate(order)])
    ax.set_xlim(-0.6, E - 0.4)
    ax.set_xlabel("rank by router score (expert id below)")
    ax.set_ylabel("router score (log)")
    ax.grid(axis="x", visible=False)
    ax.legend(handles=[Patch(facecolor=ROLE["hit"], label="resident"),
                       Patch(facecolor=ROLE["empty"], edgecolor=ROLE["neutral"], label="cold"),
                       Line2D([], [], color=ROLE["reference"], lw=2.6, label="chosen")],
              loc="upper right", ncols=3, fontsize=8.5)


def _weights(ax, scores: np.ndarray, order: np.ndarray, ids: list[int], before: np.ndarray,
             after: np.ndarray, k: int) -> list[int]:
    true = [int(e) for e in order[:k]]
    stock = scores[true] / scores[true].sum()
    shown = sorted(set(true) | set(ids), key=lambda e: int(np.flatnonzero(order == e)[0]))
    x = np.arange(len(shown))
    w = 0.26
    series = (("stock: true top-k, renormalised", dict(zip(true, stock, strict=True)),
               ROLE["reference"]),
              ("chosen, before α", dict(zip(ids, before, strict=True)), ROLE["neutral"]),
              ("chosen, after α and renormalising", dict(zip(ids, after, strict=True)),
               ROLE["replay"]))
    for j, (label, vals, colour) in enumerate(series):
        ys = [vals.get(e, 0.0) for e in shown]
        ax.bar(x + (j - 1) * w, ys, w, color=colour, label=label)
        for xi, y in zip(x, ys, strict=True):
            if y:
                ax.text(xi + (j - 1) * w, y + 0.02, f"{y:.2f}", ha="center", va="bottom",
                        fontsize=8.5)
    rank = {int(e): r for r, e in enumerate(order)}
    ax.set_xticks(x, [f"e{e} (rank {rank[e]})" for e in shown])
    ax.set_ylim(0, 1.18)
    ax.set_ylabel("mixing weight")
    # y=1.0: a fixed title spot (no x ticks on top), so a draw skips measuring every axis
    ax.set_title("Weights of the experts used: stock vs chosen (rows sum to 1)", y=1.0)
    ax.grid(axis="x", visible=False)
    ax.legend(loc="upper right", fontsize=8.5)
    return shown


@arranged_by(STRIP)
def routing_rank_strip(M: int, J: int, method: str, alpha: float, capacity: str, *,
                       lay: StripLayout) -> FigureResult:
    s = setting(M, J, method, alpha, capacity)
    mo = s.sweep.moment
    scores = np.array(mo.scores, dtype=np.float32)  # [E]
    res = np.array(mo.resident, dtype=bool)  # [E]
    c = choice(s)
    ids, kinds = list(c.ids), list(c.kinds)
    order = np.array(sorted(range(len(scores)), key=lambda e: (-float(scores[e]), e)))
    before, after = np.array(c.before), np.array(c.after)
    # normal mode: fixed margins (placed by _place): constrained layout was ~25% of a redraw
    with lab_figure(6.4, look=LOOK, place=lambda fig: _place(fig, *fig.axes)) as fig:
        top, bottom = fig.subplots(2, 1, gridspec_kw={"height_ratios": [1.5, 1]})
        _strip(top, scores, res, order, dict(zip(ids, kinds, strict=True)), s, c.log_lift,
               lay)
        took = ", ".join(f"e{e}" for e in ids)
        top.set_title(f"One token, one layer (step {mo.step}, layer {mo.layer}, a "
                      f"{s.capacity}-slot cache): "
                      + (f"stock top-k takes {took}, substituting nothing" if s.route.stock
                         else f"{s.words()} takes {took}: {c.swaps} substitute(s)"),
                      y=1.0)
        _weights(bottom, scores, order, ids, before, after, s.route.k)
    rank = {int(e): r for r, e in enumerate(order)}
    metrics: dict[str, float | int | str] = {
        "step": mo.step, "layer": mo.layer, "capacity": s.capacity, "setting": s.route.label(),
        "resident": ",".join(f"e{e}" for e in range(len(res)) if res[e]),
        "chosen": ",".join(f"e{e}" for e in ids),
        "chosen_ranks": ",".join(str(rank[e]) for e in ids), "kinds": ",".join(kinds),
        "swaps": c.swaps, "window": c.window, "cache_prior_lift": c.log_lift,
    }
    for i, e in enumerate(ids):
        metrics[f"weight_before_alpha_e{e}"] = float(before[i])
        metrics[f"weight_after_e{e}"] = float(after[i])
    return FigureResult(fig, metrics)
