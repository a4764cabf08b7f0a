"""Figure: per-class budgets under a long burst, measured honestly, beside the wrong P95 that
counts each rejection as a 2,000,000 s TTFT.

A projector (tabs/projector.py) keeps the three panels but arranges them 2 x 2 (BUDGETS): the
fates top left, a key cell (fate colours, SLO line, scenario) top right in place of the panels'
own legends, RIGHT and WRONG side by side below; in its words (brief(), shorten()): one-line
value labels, mode names without their bound, no n= line and no WRONG footnote (the lesson
explains the interpolation)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.transforms import ScaledTranslation

from core.experiments.fleet_sim import BURST_S, MODES, budget_runs
from core.fleet.budgets import CLASSES
from core.fleet.config import DEMO_BUDGET
from core.fleet.metrics import SEED_SENTINEL, naive_p95_by_class
from core.fleet.result import SimResult
from tabs.figure import (
    Arrangement,
    FigureResult,
    Projector,
    arranged_by,
    brief,
    lab_figure,
    shorten,
    snap_layout,
)
from tabs.fleet_sim.common import CLASS_COLORS
from tabs.palette import ROLE

W = 0.4
# Normal mode's panels (figure fractions, left/bottom/width/height): where constrained layout put
# them. The text around them does not depend on the data: fixed y labels, y tick labels of at
# most 4 characters (the P95 axis adds only "1k", past a ~500 s P95) and two lines of class
# names plus two of mode names under the bars (checked over the slider ranges).
RECTS = ((0.0544, 0.2115, 0.2956, 0.7338), (0.4086, 0.2115, 0.257, 0.7338),
         (0.7345, 0.2115, 0.257, 0.7338))
# NOTE: the queue mode refuses once queue_limit requests wait, so it is not a pure "defer".
MODE_LABEL = {"off": "off (no cap)", "reject": "reject",
              "queue": f"bounded queue ({DEMO_BUDGET.queue_limit})"}
MODE_LINES = {**MODE_LABEL, "queue": MODE_LABEL["queue"].replace(" (", "\n(")}  # as drawn
MODE_SHORT = {"off": "off", "reject": "reject", "queue": f"queue ({DEMO_BUDGET.queue_limit})"}
P95_FLOOR, P95_TOP = 0.05, 500.0  # default P95 axis; it grows to fit the data
LABEL_UP = 1.15  # a value label sits this factor above its bar top
TOP_FRAC = 0.88  # every value label's baseline stays below this fraction of the axis height
LEGEND_FRAC = 0.68  # ... and below this under the upper-left legend (the first mode's bars)
FATES = (("hit", "met SLO"), ("miss", "admitted, late"), ("rejected", "rejected"))
# Presentation: a P95 label in a short panel often crosses its SLO line; it stays legible on white.
LABEL_BOX = {"fc": "white", "ec": "none", "pad": 0.5, "alpha": 0.85}
FATES_SHORT = {"hit": "met SLO", "miss": "late", "rejected": "rejected"}


@dataclass(frozen=True, kw_only=True)
class BudgetsLayout:
    cells: list[list[str]]  # the panels' cells (subplot_mosaic); "key": the legends' own cell
    fate_top: float  # the fates' axis top (%): room above 100 for the value labels (and legend)
    mode_drop_pt: float | None  # mode names this far under the axis (None: under the ticks)
    label_room: float  # the first pair's P95 labels stay below this fraction of the axis
    value_box: dict | None  # the P95 value labels' background


# The panels' cells: normal mode places its three by hand (RECTS); a projector lays out 2 x 2
# with a key cell in place of the panels' legends, so the fates need no room for a legend above
# and the P95 labels none under one. Its panels are short: the mode names sit a fixed distance
# under the axis, below the one-line class names, and a P95 label, which often crosses its SLO
# line, sits on white (LABEL_BOX).
BUDGETS = Arrangement(
    normal=BudgetsLayout(cells=[["fate", "p95", "wrong"]], fate_top=140, mode_drop_pt=None,
                         label_room=LEGEND_FRAC, value_box=None),
    projector=BudgetsLayout(cells=[["fate", "key"], ["p95", "wrong"]], fate_top=128,
                            mode_drop_pt=17, label_room=TOP_FRAC, value_box=LABEL_BOX))
LEGENDS = ("hide", "keep", "hide")  # a projector's: fate, key, p95 is the order of the legends


def _x(m: int, k: int) -> float:
    return m + (k - 0.5) * (W + 0.04)


XS = np.array([_x(m, k) for m in range(len(MODES)) for k in range(len(CLASSES))])


@dataclass(frozen=True, kw_only=True)
class _Bars:
    """What the panels draw, one entry per bar (mode-major, class-minor), and the metrics."""

    shares: np.ndarray  # (bars, fates): % of offered
    p95s: list[float]
    wrongs: list[float]
    slos: list[float]
    colors: list[str]
    fate_labels: list[str]
    n_labels: list[str]
    attainments: list[float]
    metrics: dict[str, float | int | bool | str]


def _bars(runs: tuple[SimResult, ...], long_burst: int, long_budget: int) -> _Bars:
    metrics: dict[str, float | int | bool | str] = {
        "long_burst": long_burst, "long_budget": long_budget,
        "burst_window": f"{BURST_S[0]:g}-{BURST_S[1]:g} s"}
    shares, p95s, wrongs, slos, colors, labels, ns, att = [], [], [], [], [], [], [], []
    for mode, res in zip(MODES, runs, strict=True):
        naive_p95s = naive_p95_by_class(res.records)
        for k, name in enumerate(CLASSES):
            c = res.summary.by_class(name)
            met = c.met
            naive = naive_p95s[k]
            # NOTE: "admitted, late" is admitted minus met, so it would also hold interrupted
            # requests (SLO misses); this scene has no failure, so there are none.
            shares.append([100 * n / c.offered for n in (met, c.admitted - met, c.rejected)])
            p95s.append(c.p95)
            wrongs.append(naive)
            slos.append(c.slo_s)
            colors.append(CLASS_COLORS[name])
            deferred = f"\ndef. {c.deferral_rate:.0%}" if c.deferred else ""
            labels.append(f"{c.slo_attainment:.0%}\n{c.goodput_rps:.1f}/s{deferred}")
            ns.append(f"n={c.n_ttft}")
            att.append(c.slo_attainment)
            tag = f"{mode}_{name}"
            metrics |= {
                f"{tag}_p95_admitted_s": c.p95,
                f"{tag}_n_admitted": c.n_ttft,
                f"{tag}_rejection_rate": c.rejection_rate,
                f"{tag}_deferral_rate": c.deferral_rate,
                f"{tag}_slo_attainment": c.slo_attainment,
                f"{tag}_goodput_rps": c.goodput_rps,
                f"{tag}_sentinel_p95_WRONG": naive,
            }
    return _Bars(shares=np.array(shares), p95s=p95s, wrongs=wrongs, slos=slos, colors=colors,
                 fate_labels=labels, n_labels=ns, attainments=att, metrics=metrics)


def _ticks(ax: Axes, mode_drop_pt: float | None, extra: list[str] | None = None) -> None:
    """Class names under each bar (plus an optional second line, which a projector leaves out),
    mode names under each pair (BudgetsLayout.mode_drop_pt)."""
    names = [CLASSES[k] for _ in MODES for k in range(len(CLASSES))]
    if extra:
        names = [brief(ax, f"{n}\n{e}", n) for n, e in zip(names, extra, strict=True)]
    ax.set_xticks(XS, names, fontsize=6.5 if extra else 7)
    ax.set_xlim(-0.55, 2.55)
    ax.grid(False, axis="x")
    # under the tick labels, in axes fractions; or, in short panels, mode_drop_pt under the axis
    if mode_drop_pt is None:
        y, where = -0.2 if extra else -0.12, ax.get_xaxis_transform()
    else:
        y = 0.0
        where = ax.get_xaxis_transform() + ScaledTranslation(0, -mode_drop_pt / 72,
                                                              ax.figure.dpi_scale_trans)
    for m, mode in enumerate(MODES):
        ax.text(m, y, brief(ax, MODE_LINES[mode], MODE_SHORT[mode]), ha="center", va="top",
                fontsize=8, fontweight="bold", linespacing=1.1, transform=where)


def _log_top(values: list[float], frac: float, floor: float) -> float:
    """The smallest top of a log axis starting at `floor` that puts every value at or below
    `frac` of the axis height (NaN values ignored)."""
    finite = [v for v in values if math.isfinite(v) and v > 0]
    if not finite:
        return floor * 10
    lo, hi = math.log10(floor), math.log10(max(finite))
    return 10 ** (lo + max(hi - lo, 0.0) / frac)


def p95_limits(p95s: list[float], legend_frac: float = LEGEND_FRAC) -> tuple[float, float]:
    """(bottom, top) of the P95 axis: the default 0.05-500 s unless the data needs more room."""
    finite = [v for v in p95s if math.isfinite(v) and v > 0]
    bottom = min([P95_FLOOR, *(v / 2 for v in finite)])
    labels = [v * LABEL_UP for v in p95s]
    top = max(P95_TOP, _log_top(labels, TOP_FRAC, bottom),
              _log_top(labels[:2], legend_frac, bottom))  # the legend covers the first pair
    return bottom, top


DECADE_NAMES = {0.01: "0.01", 0.1: "0.1", 1.0: "1", 10.0: "10", 100.0: "100", 1e3: "1k",
                1e4: "10k", 1e5: "100k", 1e6: "1M", 1e7: "10M"}


def _decade_ticks(bottom: float, top: float, every: int = 1) -> tuple[list[float], list[str]]:
    exps = range(math.ceil(math.log10(bottom)), math.floor(math.log10(top)) + 1)
    ticks = [10.0**e for e in exps if e % every == 0]
    return ticks, [DECADE_NAMES.get(t, f"{t:g}") for t in ticks]


def _short(v: float) -> str:
    """A value label for the projector: two significant digits, no exponent."""
    return f"{v:.0f}" if v >= 10 else f"{v:.2g}"


def _fate(ax: Axes, d: _Bars, long_burst: int, long_budget: int, lay: BudgetsLayout) -> None:
    bottom = np.zeros(len(XS))
    for j, (role, _) in enumerate(FATES):
        ax.bar(XS, d.shares[:, j], W, bottom=bottom, color=ROLE[role], lw=0)
        bottom += d.shares[:, j]
    for x, label, a in zip(XS, d.fate_labels, d.attainments, strict=True):
        shorten(ax.text(x, 101, label, ha="center", va="bottom", fontsize=7, linespacing=1.1),
                f"{a:.0%}")
    ax.set_ylim(0, lay.fate_top)
    ax.set_yticks([0, 25, 50, 75, 100])
    ax.set_ylabel(brief(ax, "% of offered requests", ""))
    ax.set_title(brief(ax, "SLO attainment (%), goodput (/s)", "SLO met, % of offered"))
    ax.legend(handles=[Patch(color=ROLE[r], label=lbl) for r, lbl in FATES],
              loc="upper center", ncols=3, fontsize=7, handlelength=1.2, columnspacing=0.8,
              title_fontsize=7, title=f"{long_burst} long requests in {BURST_S[0]:g}-"
                                      f"{BURST_S[1]:g} s, long budget {long_budget}")
    _ticks(ax, lay.mode_drop_pt)


def _slo_label(slo: tuple[float, ...]) -> str:
    return f"TTFT SLO ({slo[0]:g} s, {slo[1]:g} s)"


def _slo_handle(slo: tuple[float, ...]) -> Line2D:
    return Line2D([], [], color=ROLE["reference"], lw=1.5, label=_slo_label(slo))


def _p95(ax: Axes, d: _Bars, slo: tuple[float, ...], lay: BudgetsLayout) -> None:
    ax.bar(XS, d.p95s, W, color=d.colors)
    ax.hlines(d.slos, XS - W / 2, XS + W / 2, color=ROLE["reference"], lw=1.5)
    bottom_s, top_s = p95_limits(d.p95s, lay.label_room)
    for x, v in zip(XS, d.p95s, strict=True):
        if math.isnan(v):
            shorten(ax.text(x, bottom_s * 1.3, "n=0: no latency", ha="center", va="bottom",
                            rotation=90, fontsize=7, color=ROLE["miss"]), "no latency")
        else:
            shorten(ax.text(x, v * LABEL_UP, f"{v:.2f}", ha="center", va="bottom", fontsize=7,
                            bbox=lay.value_box), _short(v))
    ax.set_yscale("log")
    ax.set_ylim(bottom_s, top_s)
    ax.set_yticks(*_decade_ticks(bottom_s, top_s))
    ax.minorticks_off()
    ax.set_ylabel(brief(ax, "P95 TTFT (s, log)", "P95 (s)"))
    ax.set_title(brief(ax, "RIGHT: P95, admitted only", "RIGHT: P95 of admitted"))
    # The tick labels name the classes: the legend only keys the SLO line.
    ax.legend(handles=[_slo_handle(slo)], loc="upper left", fontsize=7)
    _ticks(ax, lay.mode_drop_pt, d.n_labels)


def _wrong(ax: Axes, d: _Bars, mode_drop_pt: float | None) -> None:
    ax.bar(XS, d.wrongs, W, color=d.colors, hatch="xx", edgecolor=ROLE["rejected"], lw=0.5)
    for x, bad in zip(XS, d.wrongs, strict=True):
        if bad < SEED_SENTINEL:
            shorten(ax.text(x, bad * 1.3, f"{bad:.2f}", ha="center", va="bottom", fontsize=7),
                    _short(bad))
    ax.set_yscale("log")
    ax.set_ylim(0.05, 5e8)
    ax.set_yticks([0.1, 10, 1e3, 1e5, 1e7], ["0.1", "10", "1k", "100k", "10M"])
    ax.minorticks_off()
    ax.axhline(SEED_SENTINEL, color=ROLE["rejected"], ls="--", lw=1)
    ax.set_ylabel(brief(ax, "'P95 TTFT' (s, log)", "'P95' (s)"))  # a projector's key: the line
    shorten(ax.text(2.55, SEED_SENTINEL * 2.2, f"rejection = {SEED_SENTINEL:,.0f} s", ha="right",
                    fontsize=7, color=ROLE["rejected"]), "")
    ax.set_title(brief(ax, "WRONG: rejections as a TTFT", "WRONG: rejections as TTFT"),
                 color=ROLE["miss"])
    # NOTE: with exactly 5% rejected, 0.95 (n - 1) falls 0.05 of the way from the largest
    # admitted TTFT to the first sentinel, so the interpolated P95 is ~0.05 x the sentinel.
    shorten(ax.text(0.03, 0.97, f"P95 interpolates: 5% of a class rejected\nmakes it "
                    f"~{0.05 * SEED_SENTINEL:,.0f} s; a few more, the sentinel.",
                    transform=ax.transAxes, va="top", fontsize=7, color=ROLE["miss"]), "")
    _ticks(ax, mode_drop_pt)


def _key(ax: Axes, slo: tuple[float, ...], long_burst: int, long_budget: int) -> None:
    """A projector's key cell (BUDGETS): the fate colours, the SLO and sentinel lines and the
    scenario, what the panels' hidden legends and the sentinel's label say in normal mode."""
    ax.set_axis_off()
    ax.legend(handles=[*(Patch(color=ROLE[r], label=FATES_SHORT[r]) for r, _ in FATES),
                       _slo_handle(slo),
                       Line2D([], [], color=ROLE["rejected"], ls="--", lw=1,
                              label=f"rejection = {SEED_SENTINEL / 1e6:g}M s")],
              loc="center left", bbox_to_anchor=(0.0, 0.5), ncols=2, fontsize=8,
              handlelength=1.2, columnspacing=1.0, alignment="left", title_fontsize=8,
              title=f"{long_burst} long in {BURST_S[0]:g}-{BURST_S[1]:g} s, budget {long_budget}")


def _place(fig: Figure) -> None:
    """Normal mode: the three panels where constrained layout put them (RECTS)."""
    for ax, rect in zip(fig.axes, RECTS, strict=True):
        ax.set_position(rect)


@arranged_by(BUDGETS)
def fleet_sim_budgets(long_burst: int, long_budget: int, seed: int, *,
                      lay: BudgetsLayout) -> FigureResult:
    runs = budget_runs(long_burst, long_budget, seed)
    d = _bars(runs, long_burst, long_budget)
    slo = runs[0].config.slo_s
    look = Projector(words={_slo_label(slo): f"SLO ({slo[0]:g} s, {slo[1]:g} s)"},
                     legends=LEGENDS)
    # normal mode: fixed margins (_place), constrained layout was ~1/4 of a redraw
    with lab_figure(4.3, look=look, place=_place) as fig:
        grid = fig.subplot_mosaic(lay.cells)
        _fate(grid["fate"], d, long_burst, long_budget, lay)
        _p95(grid["p95"], d, slo, lay)
        _wrong(grid["wrong"], d, lay.mode_drop_pt)
        if "key" in grid:  # the one cell only a projector's arrangement has (BUDGETS)
            _key(grid["key"], slo, long_burst, long_budget)
    snap_layout(fig)
    return FigureResult(fig, d.metrics)
