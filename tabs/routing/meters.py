"""Figure: "your meters agree with each other". Over every setting at one cache size: agree is
1 - swap exactly (a line), the floored KL is close to a rescaled swap count; beside them, the
quality cost measured at the output, which the swap rate does not predict."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.lines import Line2D

from core.experiments.routing import every_setting, setting
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE
from tabs.routing.common import FAMILY_STYLE, family

# (normal, projector) legend label per family
FAMILY_WORDS = {"max_rank J=1": ("max_rank, J = 1: the top expert kept", "J = 1"),
                "max_rank J=0": ("max_rank, J = 0: the top expert swappable", "J = 0"),
                "cache_prior": ("cache_prior (no rank kept)", "cache_prior")}
# A projector: the legend and axis labels in fewer words.
LOOK = Projector(words={**dict(FAMILY_WORDS.values()), "your setting": "yours",
                        "KL(stock ‖ chosen), nats per row": "KL, nats per row",
                        "Δ NLL vs stock, nats per byte": "Δ NLL, nats per byte",
                        "swap (% of slots substituted)": "swap (% of slots)"})
# Normal mode's panels per cache size (figure fractions, left/bottom/width/height): where
# constrained layout put them. The points are every setting at that size (fixed data, fixed
# words), so only the size moves the margins (64 slots: longer Δ NLL tick labels).
RECTS = {"16": ((0.0544, 0.1845, 0.2612, 0.6995), (0.3673, 0.1845, 0.2612, 0.6995),
                (0.7346, 0.1845, 0.2612, 0.6995)),
         "32": ((0.0544, 0.1845, 0.2612, 0.6995), (0.3673, 0.1845, 0.2612, 0.6995),
                (0.7346, 0.1845, 0.2612, 0.6995)),
         "64": ((0.0544, 0.1845, 0.2581, 0.6995), (0.3642, 0.1845, 0.2581, 0.6995),
                (0.7377, 0.1845, 0.2581, 0.6995))}
# a fixed title spot (no x ticks on top), so a draw skips measuring every axis
TITLE_Y = 1.0
SUPTITLE_Y = 0.98958  # where constrained layout puts a suptitle: 1 - its 3 pt pad at 4 in


@dataclass(frozen=True, kw_only=True)
class MetersLayout:
    panels: tuple[str, ...]  # the panels, left to right
    suptitle_y: float | None  # the suptitle's height (None: constrained layout places it)


# A projector: no agree panel (an identity, said in the suptitle) to give the others room; its
# layout is constrained, so it places the suptitle too.
METERS = Arrangement(
    normal=MetersLayout(panels=("agree", "kls", "out"), suptitle_y=SUPTITLE_Y),
    projector=MetersLayout(panels=("kls", "out"), suptitle_y=None))


def _group(p) -> str:
    return "stock" if p.record.swaps == 0 else family(p.method, p.J)


def _scatter(ax, pts, y, current: str, hollow: bool = False) -> None:
    """One artist per family (a redraw stays cheap), your setting ringed on top."""
    for name in (*FAMILY_STYLE, "stock"):
        st = FAMILY_STYLE.get(name, {"color": ROLE["reference"], "marker": "*"})
        xs = [100 * p.record.swap_rate for p in pts if _group(p) == name]
        ys = [v for p, v in zip(pts, y, strict=True) if _group(p) == name]
        ax.plot(xs, ys, ls="", marker=st["marker"], ms=11 if name == "stock" else 6,
                mfc="white" if hollow else st["color"], mec=st["color"], mew=1.0,
                zorder=2 if hollow else 3)
    if not hollow:
        for p, v in zip(pts, y, strict=True):
            if p.record.route == current:
                ax.plot([100 * p.record.swap_rate], [v], ls="", marker="o", ms=12, mfc="none",
                        mec=ROLE["reference"], mew=1.8, zorder=4)


def _placer(capacity: str):
    def place(fig) -> None:
        for ax, rect in zip(fig.axes, RECTS[capacity], strict=True):
            ax.set_position(rect)
    return place


@arranged_by(METERS)
def routing_meters(M: int, J: int, method: str, alpha: float, capacity: str, *,
                   lay: MetersLayout) -> FigureResult:
    s = setting(M, J, method, alpha, capacity)
    pts = every_setting(s.sweep)
    swap = np.array([p.record.swap_rate for p in pts])
    kl = np.array([p.record.kl for p in pts])
    klc = np.array([p.record.kl_colibri for p in pts])
    dnll = np.array([p.record.delta_nll for p in pts])
    k = s.route.k
    slope = float(klc @ swap / (swap @ swap))  # nats per row per unit swap: least squares
    slope_6 = float(kl @ swap / (swap @ swap))  # through the origin
    per_swap, per_swap_6 = slope / k, slope_6 / k  # a row has k slots
    current = s.route.label()
    xmax = 100 * swap.max() * 1.1
    # normal mode: fixed margins (RECTS): constrained layout was ~40% of a redraw
    with lab_figure(4.0, look=LOOK, place=_placer(capacity)) as fig:
        names = lay.panels
        panels = dict(zip(names, fig.subplots(1, len(names)), strict=True))
        kls, out = panels["kls"], panels["out"]
        xs = np.array([0, xmax])
        if (agree := panels.get("agree")) is not None:
            agree.plot(xs, 100 - xs, color=ROLE["neutral"], lw=1.2)
            _scatter(agree, pts, [100 * p.record.agree for p in pts], current)
            agree.set_ylabel("agree (% of slots)")
            agree.set_title("agree = 1 − swap, exactly", y=TITLE_Y)
        kls.plot(xs, slope * xs / 100, color=ROLE["neutral"], lw=1.0, ls="--")
        kls.plot(xs, slope_6 * xs / 100, color=ROLE["neutral"], lw=1.0, ls=":")
        _scatter(kls, pts, klc, current)
        _scatter(kls, pts, kl, current, hollow=True)
        out.axhline(0, color=ROLE["grid"], lw=1.2)
        _scatter(out, pts, dnll, current)
        for ax in fig.axes:
            ax.set_xlim(0, xmax)
        # a projector: the floors in fewer words
        kls.text(0.03, 0.97, brief(kls, f"floor 1e-12 (filled): ≈ {per_swap:.1f} nats per "
                                   f"swapped slot\nfloor 1e-6 (hollow): ≈ {per_swap_6:.1f} "
                                   "nats per swapped slot",
                                   f"nats per swapped slot:\n{per_swap:.1f} (floor 1e-12)\n"
                                   f"{per_swap_6:.1f} (1e-6, hollow)"),
                 transform=kls.transAxes, va="top", fontsize=8.5)
        kls.set_ylabel("KL(stock ‖ chosen), nats per row")
        kls.set_title("KL: the swap rate, rescaled", y=TITLE_Y)
        out.set_ylabel("Δ NLL vs stock, nats per byte")
        out.set_title("Δ NLL: which slot matters", y=TITLE_Y)
        for ax in fig.axes:
            ax.set_xlabel("swap (% of slots substituted)")
        handles = [Line2D([], [], ls="", color=st["color"], marker=st["marker"],
                          label=FAMILY_WORDS[name][0])
                   for name, st in FAMILY_STYLE.items()]
        handles += [Line2D([], [], ls="", marker="*", color=ROLE["reference"], ms=9,
                           label="stock"),
                    Line2D([], [], ls="", marker="o", ms=11, mfc="none", mec=ROLE["reference"],
                           mew=1.8, label="your setting")]
        fig.legend(handles=handles, loc="outside lower center", ncols=5, fontsize=8)
        title = f"Every setting at {s.capacity} slots ({len(pts)} points"
        fig.suptitle(brief(fig, f"{title}, closed loop, decoded step by step)",
                           f"{title}); agree = 1 − swap"),
                     fontsize=10.5, x=0.01, ha="left", y=lay.suptitle_y)
    metrics = {"capacity": s.capacity, "settings": len(pts),
               "kl_colibri_nats_per_swapped_slot": per_swap,
               "kl_nats_per_swapped_slot": per_swap_6,
               "max_abs_agree_minus_one_minus_swap":
                   float(max(abs(p.record.agree - (1 - p.record.swap_rate)) for p in pts)),
               "max_swap": float(swap.max())}
    for name in FAMILY_STYLE:
        mine = [p for p in pts if p.record.swaps and family(p.method, p.J) == name]
        metrics[f"{name.replace(' ', '_').replace('=', '')}_max_swap"] = \
            max(p.record.swap_rate for p in mine)
        metrics[f"{name.replace(' ', '_').replace('=', '')}_max_delta_nll"] = \
            max(p.record.delta_nll for p in mine)
    return FigureResult(fig, metrics)
