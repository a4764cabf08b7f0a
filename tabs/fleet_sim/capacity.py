"""Figure: goodput against offered load per router, with and without the failure, and the hit
rate and prefill load behind it: a fleet's capacity is set by how much prefill its router saves.

The sweep (core.experiments.fleet_sim.capacity_sweeps) runs the failover scene's trace recipe
(default trace seed, default failure time) at every rate of RATES under every router, twice:
once healthy, once with c0 down. It is computed once per process; a redraw only moves the
marker and the highlighted router.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from core.experiments.fleet_sim import DOWN_S, FAIL_AT, FAIL_CLUSTER, RATES, SEED, capacity_sweeps
from core.fleet.routers import ROUTERS
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, lab_figure, snap_layout
from tabs.fleet_sim.common import ROUTER_COLORS, ROUTER_MARKERS
from tabs.palette import ROLE

LOAD_TOP = 2.0  # prefill-load axis top; larger loads sit on the edge (none at the defaults)
# Normal mode's panels (figure fractions, left/bottom/width/height): where constrained layout put
# them. Nothing around them depends on the sliders (fixed titles, labels and axis limits: the
# sweep is computed once), so the layout is the same at every rate and router.
RECTS = ((0.0544, 0.1061, 0.3216, 0.838), (0.4346, 0.1061, 0.2474, 0.838),
         (0.7465, 0.1061, 0.2474, 0.838))
# A projector: both legends as one below the panels (the line styles, then the routers), in
# shorter words; shorter titles and axis labels
LOOK = Projector(
    words={"Goodput: requests on time per second": "Goodput",
           "goodput (requests / s on time)": "requests / s on time",
           "prefix-cache token hit rate (%)": "token hit rate (%)",
           "prefill load (1 = every slot always busy)": "load (1 = all busy)",
           "arrival rate (requests / s)": "arrival rate (req / s)",
           "saturated: queues only grow": "saturated"},
    legends="below")


@dataclass(frozen=True, kw_only=True)
class CapacityLayout:
    offered_caps: str  # the "offered" key's thick line: its end caps


# A projector: the gathered legend's short handles, so the thick line's caps are kept off its
# label.
CAPACITY = Arrangement(normal=CapacityLayout(offered_caps="projecting"),
                       projector=CapacityLayout(offered_caps="butt"))


def _place(fig: Figure) -> None:
    for ax, rect in zip(fig.axes, RECTS, strict=True):
        ax.set_position(rect)


def _style(router: str, picked: str) -> dict[str, object]:
    on = router == picked
    return {"color": ROUTER_COLORS[router], "marker": ROUTER_MARKERS[router],
            "ms": 5 if on else 3.5, "lw": 2.4 if on else 1.1, "alpha": 1.0 if on else 0.75,
            "zorder": 4 if on else 2}


@arranged_by(CAPACITY)
def fleet_sim_capacity(rate: int, router: str, *, lay: CapacityLayout) -> FigureResult:
    healthy, failed = capacity_sweeps()
    x = np.array(RATES, dtype=float)
    # normal mode: fixed margins (_place): constrained layout was ~40% of a redraw
    with lab_figure(4.2, look=LOOK, place=_place) as fig:
        good, hits, load = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.3, 1, 1]})
        good.plot(x, healthy.offered_rps, color=ROLE["neutral"], lw=5, alpha=0.35, zorder=1,
                  label="offered (all on time)")
        for r in ROUTERS:
            a = healthy.row(r)
            st = _style(r, router)
            good.plot(x, healthy.goodput_rps[a], ls="-", **st)
            good.plot(x, failed.goodput_rps[a], ls=(0, (3, 2)), **{**st, "marker": None})
            hits.plot(x, healthy.hit_rate[a] * 100, ls="-", **st)
            load.plot(x, np.minimum(healthy.prefill_load[a], LOAD_TOP), ls="-", **st)
        load.axhspan(1.0, LOAD_TOP, color=ROLE["rejected"], alpha=0.08, lw=0)
        load.axhline(1.0, color=ROLE["reference"], lw=1, ls="--")
        load.text(x[0], 1.04, "saturated: queues only grow", fontsize=7, va="bottom",
                  color=ROLE["annotation"])
        for ax in (good, hits, load):
            ax.axvline(rate, color=ROLE["annotation"], lw=0.8)
            ax.set_xlim(x[0] - 3, x[-1] + 3)
            ax.set_xticks([20, 40, 60, 80, 100])
            ax.set_xlabel("arrival rate (requests / s)")
        top = float(np.nanmax(healthy.offered_rps)) * 1.25
        good.set_ylim(0, top)
        good.set_ylabel("goodput (requests / s on time)")
        # y=1.0: a fixed title spot (no x ticks on top), so a draw skips measuring every axis
        good.set_title("Goodput: requests on time per second", y=1.0)
        style_legend = [
            Line2D([], [], color=ROLE["neutral"], lw=5, alpha=0.35, label="offered",
                   solid_capstyle=lay.offered_caps),
            Line2D([], [], color=ROLE["annotation"], ls="-", label="no failure"),
            Line2D([], [], color=ROLE["annotation"], ls=(0, (3, 2)),
                   label=f"c{FAIL_CLUSTER} down {FAIL_AT}-{FAIL_AT + DOWN_S:g} s"),
        ]
        good.legend(handles=style_legend, loc="upper left", fontsize=7)
        hits.set_ylim(0, 100)
        hits.set_ylabel("prefix-cache token hit rate (%)")
        hits.set_title("Hit rate (no failure)", y=1.0)
        hits.legend(handles=[Line2D([], [], **{**_style(r, router), "label": r})
                             for r in ROUTERS], loc="lower left", fontsize=7)
        load.set_ylim(0, LOAD_TOP)
        load.set_ylabel("prefill load (1 = every slot always busy)")
        load.set_title("Prefill load (no failure)", y=1.0)
    snap_layout(fig)
    metrics: dict[str, float | int | str] = {"rate": rate, "router": router,
                                             "sweep_seed": SEED, "sweep_fail_at": FAIL_AT}
    for r in ROUTERS:
        a = healthy.row(r)
        sat = [v for v, rho in zip(RATES, healthy.prefill_load[a], strict=True) if rho > 1]
        metrics |= {
            f"{r}_goodput_rps_at_{RATES[-1]}": float(healthy.goodput_rps[a, -1]),
            f"{r}_goodput_rps_at_{RATES[-1]}_with_failure": float(failed.goodput_rps[a, -1]),
            # NaN, never a stand-in rate, when the sweep never saturates this router
            f"{r}_first_saturated_rate": float(sat[0]) if sat else math.nan,
        }
    for b, v in enumerate(RATES):
        metrics[f"offered_rps_at_{v}"] = float(healthy.offered_rps[b])
    return FigureResult(fig, metrics)
