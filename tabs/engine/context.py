"""Figure: context parallelism. A prompt split over P ranks: each KDA layer gathers every other
rank's fixed-size (segment state, transition) message, each MLA layer passes the KV latents of
the whole sequence round a ring. Bytes received per rank per layer against sequence length at
toy and K3 dims, with the crossover marked; right, the crossover against P."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from core.kda.parallel import CPGeometry, cp_crossover, cp_sweep, k3_cp, toy_cp
from core.model.manifest import shipped_dims as dims
from tabs.axes import plain_log
from tabs.engine.common import RANKS
from tabs.figure import (
    Arrangement,
    FigureResult,
    Projector,
    arranged_by,
    brief,
    lab_figure,
    layout_edge,
    shorten,
)
from tabs.palette import ROLE
from tabs.units import fmt_bytes

TOKENS = {"toy": (2**6, 2**16), "K3": (2**10, 2**22)}  # sequence lengths drawn, per geometry
GEO_COLOR = {"toy": ROLE["neutral"], "K3": ROLE["reference"]}
# Normal mode places the panels by hand as constrained layout did (figure fractions, within 1e-6
# at every P): fixed left, bottom and height, fixed gaps, widths 1.15 : 1.15 : 0.8. Only the
# right edge moves: from P ~ 28 the crossover values written right of the dots reach past the
# right panel's last x tick label ("64", ending at the layout edge), and the panels narrow until
# the longer value ends at that edge (tabs.figure.layout_edge).
LEFT, BOTTOM, HEIGHT, RIGHT = 0.071448, 0.159676, 0.789236, 0.988833
GAPS = (0.093115, 0.073614)
RATIO = 1.15 / 0.8


def geometries() -> tuple[CPGeometry, CPGeometry]:
    return toy_cp(dims()), k3_cp()


def _bytes_axis(axis, lo: float, hi: float) -> None:
    """Log ticks at every 4th power of two, labelled in binary units."""
    first, last = math.floor(math.log2(lo) / 4) * 4, math.ceil(math.log2(hi) / 4) * 4
    axis.set_major_locator(FixedLocator([2.0**e for e in range(first, last + 1, 4)]))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda x, _: fmt_bytes(x).replace(".0 ", " ")))


def _tokens_axis(axis, lo: float, hi: float, every: int) -> None:
    """Log ticks at every `every`-th power of two, labelled 64, 1K, 256K, 4M (binary units)."""
    first, last = math.ceil(math.log2(lo) - 1e-9), math.floor(math.log2(hi) + 1e-9)
    axis.set_major_locator(FixedLocator([2.0**e for e in range(first, last + 1, every)]))
    axis.set_minor_locator(NullLocator())

    def label(x: float, _pos: int) -> str:
        for unit, size in (("M", 2**20), ("K", 2**10)):
            if x >= size:
                return f"{x / size:g}{unit}"
        return f"{x:g}"

    axis.set_major_formatter(FuncFormatter(label))


LABELS = ("KDA: all-gather of P - 1 (S, M) messages + conv halo",
          "MLA: ring passes (P - 1)/P of the KV latents",
          "KDA scan: one message, P - 1 hops in a row")
# A projector: the three series in a few words (one legend row under the panels), shorter
# axis labels; the crossover panel's legend dropped (its lines are named at their start).
SHORT = ("KDA all-gather", "MLA ring", "KDA scan (P - 1 hops)")
LOOK = Projector(words={**dict(zip(LABELS, SHORT, strict=True)),
                        "sequence length T (tokens)": "tokens T",
                        "crossover T* (tokens, per layer)": "T* (tokens)",
                        "Crossover vs ranks": "Crossover"},
                 legends=("hide", "keep"))


@dataclass(frozen=True, kw_only=True)
class CPLayout:
    tokens_every: int  # token axes: a tick at every n-th power of two
    ranks_every: int  # the ranks axis: a tick at every n-th power of two
    dot_texts: str  # T* and crossover values: a "set" side of their dots, or the one with "room"
    names_at_start: bool  # each geometry's name written at its line's start (no legend says it)


# A projector: fewer ticks for the larger tick labels; T* alone (shorten) and each crossover
# value on the side of its dot with room (not into the tick labels or off the plot); the
# geometries named at their lines' start, in place of the legend it drops (LOOK)
CP = Arrangement(normal=CPLayout(tokens_every=2, ranks_every=1, dot_texts="set",
                                 names_at_start=False),
                 projector=CPLayout(tokens_every=4, ranks_every=2, dot_texts="room",
                                    names_at_start=True))


def _volume(ax, geo: CPGeometry, P: int, first: bool, lay: CPLayout) -> dict[str, float]:
    lo, hi = TOKENS[geo.name]
    T = np.unique(np.geomspace(lo, hi, 49).astype(int))
    sw = cp_sweep(geo, P, tuple(int(t) for t in T))
    kda = np.array([p.kda for p in sw.points], float)
    mla = np.array([p.mla_ring for p in sw.points], float)
    ax.loglog(T, kda, color=ROLE["kda"], lw=2.2, label=LABELS[0])
    ax.loglog(T, mla, color=ROLE["mla"], lw=2.2, label=LABELS[1])
    ax.loglog(T, [sw.points[0].kda_scan] * len(T), color=ROLE["kda"], ls=":", lw=1.2,
              label=LABELS[2])
    x = sw.crossover
    assert x is not None
    y = float(sw.points[0].kda)
    ax.axvline(x, color=ROLE["annotation"], ls="--", lw=0.9)
    ax.plot([x], [y], "o", color=ROLE["annotation"], ms=6, zorder=4)
    if lay.dot_texts == "room":
        right = math.log(x / lo) / math.log(hi / lo) < 0.55
        side = {"xytext": (6, -6), "ha": "left", "va": "top"} if right else \
            {"xytext": (-6, 6), "ha": "right", "va": "bottom"}
    else:
        side = {"xytext": (-8, 12), "ha": "right"}
    shorten(ax.annotate(f"crossover\nT* = {x:,.0f} tokens", (x, y), textcoords="offset points",
                        fontsize=8, color=ROLE["annotation"], **side),
            f"T* = {x:,.0f}")
    ax.set_xlim(lo, hi)
    _tokens_axis(ax.xaxis, lo, hi, every=lay.tokens_every)
    ylo = min(sw.points[0].kda_scan, mla[0]) / 4
    yhi = max(kda[-1], mla[-1]) * 4
    ax.set_ylim(ylo, yhi)
    _bytes_axis(ax.yaxis, ylo, yhi)
    ax.set_xlabel("sequence length T (tokens)")
    # a projector: one y label for both volume panels
    shorten(ax.set_ylabel("bytes received per rank, per layer"),
            "bytes per rank, per layer" if first else "")
    # y=1.0: a fixed title spot (no x ticks on top), so a draw skips measuring every axis
    ax.set_title(brief(ax, f"Toy model dims, P = {P}", f"Toy dims, P = {P}")
                 if geo.name == "toy" else f"K3 dims, P = {P}", loc="left", y=1.0)
    return {"crossover": x, "model_crossover": float(sw.model_crossover or 0.0),
            "kda_bytes": float(sw.points[0].kda), "scan_bytes": float(sw.points[0].kda_scan),
            "mla_bytes_per_token": float(geo.mla_bytes_per_token)}


def _crossovers(ax, geos: tuple[CPGeometry, ...], P: int, lay: CPLayout) -> dict[str, float]:
    ranks = np.unique(np.geomspace(RANKS[0], RANKS[1], 40).astype(int))
    out = {}
    for geo in geos:
        xs = [cp_crossover(geo, int(p)) for p in ranks]
        ax.loglog(ranks, xs, color=GEO_COLOR[geo.name], lw=2.0, label=f"{geo.name} dims")
        here = cp_crossover(geo, P)
        assert here is not None
        ax.plot([P], [here], "o", color=GEO_COLOR[geo.name], ms=7, mec="white", zorder=4)
        if lay.names_at_start:
            ax.annotate(geo.name, (ranks[0], xs[0]), xytext=(3, 12), textcoords="offset points",
                        fontsize=8, color=GEO_COLOR[geo.name], ha="left", va="bottom")
        below = {"xytext": (6, -4), "ha": "left", "va": "top"}
        side = {"xytext": (-6, 6), "ha": "right", "va": "bottom"} \
            if lay.dot_texts == "room" and P >= 16 else below
        ax.annotate(f"{here:,.0f}", (P, here), textcoords="offset points", fontsize=8, **side)
        out[geo.name] = here
    ax.axvline(P, color=ROLE["annotation"], ls="--", lw=0.9)
    ax.set_xlim(RANKS[0], RANKS[1])
    plain_log(ax.xaxis, RANKS[0], RANKS[1], base=2, every=lay.ranks_every)
    lo, hi = 2.0**8, 2.0**22
    ax.set_ylim(lo, hi)
    _tokens_axis(ax.yaxis, lo, hi, every=lay.tokens_every)
    ax.set_xlabel("ranks P")
    ax.set_ylabel("crossover T* (tokens, per layer)")
    ax.set_title("Crossover vs ranks", loc="left", y=1.0)
    ax.legend(loc="upper left")
    return out


def _place(fig, panels: tuple[Axes, Axes, Axes], ranks: int) -> None:
    """Lay the panels out as constrained layout did: the widest width w (of the narrow right
    panel) that keeps each crossover value, written right of its dot at P, inside the layout
    edge."""
    fixed = RIGHT - LEFT - sum(GAPS)

    def put(w: float) -> None:
        x = LEFT
        for ax, width, gap in zip(panels, (RATIO * w, RATIO * w, w), (*GAPS, 0.0), strict=True):
            ax.set_position([x, BOTTOM, width, HEIGHT])
            x += width + gap

    w0 = fixed / (2 * RATIO + 1)
    put(w0)
    c = panels[2]
    at = math.log(ranks / RANKS[0]) / math.log(RANKS[1] / RANKS[0])  # P's axes fraction
    renderer = fig.canvas.get_renderer()
    # a value's right end is c's left + at * w + tail (its offset and width: fixed)
    end = max(text.get_window_extent(renderer).x1 / fig.bbox.width for text in c.texts)
    edge = layout_edge(fig)
    if end > edge:
        tail = end - c.get_position().x0 - at * w0
        put((fixed + edge - RIGHT - tail) / (2 * RATIO + at))


@arranged_by(CP)
def engine_cp(ranks: int, *, lay: CPLayout) -> FigureResult:
    toy, k3 = geometries()
    # normal mode: fixed margins (placed by _place): constrained layout was ~30% of a redraw
    with lab_figure(4.6, look=LOOK,
                    place=lambda fig: _place(fig, tuple(fig.axes), ranks)) as fig:
        a, b, c = fig.subplots(1, 3, width_ratios=[1.15, 1.15, 0.8])
        m_toy = _volume(a, toy, ranks, first=True, lay=lay)
        m_k3 = _volume(b, k3, ranks, first=False, lay=lay)
        _crossovers(c, (toy, k3), ranks, lay)
        handles, labels = a.get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=3)
    metrics: dict[str, float | int] = {"ranks": ranks}
    for name, m in (("toy", m_toy), ("k3", m_k3)):
        metrics |= {f"{name}_{k}": v for k, v in m.items()}
    return FigureResult(fig, metrics)
