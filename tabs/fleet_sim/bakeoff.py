"""Figure: the router bake-off on one seeded trace with a failure: hit rate vs P95 TTFT, load CV."""

from __future__ import annotations

import math

import numpy as np

from core.experiments.fleet_sim import DOWN_S, FAIL_CLUSTER, fleet_run
from core.fleet.bakeoff import pareto_front
from core.fleet.routers import ROUTERS
from tabs.figure import FigureResult, Projector, brief, lab_figure, snap_layout
from tabs.fleet_sim.common import ROUTER_MARKERS
from tabs.palette import ROLE

MARKERS = ROUTER_MARKERS
PICKED = "#0072B2"
X_LIM = (0.1, 20.0)  # default P95 axis; it widens (never clips) when a router falls outside
NICE = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000,
        10_000)
# A projector: the routers' legend below both panels, in short words; shorter titles and
# axis labels
LOOK = Projector(
    words={"dominated: another router is better on both": "dominated",
           "P95 TTFT of admitted short requests (s, log)  ← better":
               "short P95 TTFT (s, log)  ← better",
           "prefix-cache token hit rate (%)  ↑ better": "hit rate (%)  ↑ better",
           "Pareto: hit rate vs short P95 TTFT (black edge: on the front)":
               "Pareto (black edge: on the front)",
           "CV of requests served per cluster  ← more even": "CV per cluster  ← more even",
           "Load balance over the run": "Load balance"},
    legends="below")


def x_limits(p95: np.ndarray) -> tuple[float, float]:
    """X_LIM, widened to the next NICE value with a 30% margin so every finite P95 is drawn."""
    finite = p95[np.isfinite(p95)]
    lo, hi = X_LIM
    if finite.size:
        if finite.min() < lo * 1.3:
            lo = max([v for v in NICE if v <= finite.min() / 1.3], default=NICE[0])
        if finite.max() > hi / 1.3:
            hi = min([v for v in NICE if v >= finite.max() * 1.3], default=NICE[-1])
    return lo, hi


def _tick_text(v: float) -> str:
    return f"{v:g}" if v < 1000 else f"{v / 1000:g}k"


def fleet_sim_bakeoff(rate: int, fail_at: int, router: str, seed: int) -> FigureResult:
    runs = {r: fleet_run(rate, fail_at, r, seed) for r in ROUTERS}
    p95 = np.array([runs[r].summary.by_class("short").p95 for r in ROUTERS])
    hit = np.array([runs[r].summary.hit_rate * 100 for r in ROUTERS])
    cv = np.array([runs[r].summary.load.cv for r in ROUTERS])
    slo = np.array([runs[r].summary.overall.slo_attainment * 100 for r in ROUTERS])
    front = pareto_front(p95, hit)
    x_lim = x_limits(p95)
    with lab_figure(4.2, look=LOOK) as fig:
        pareto, loads = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.5, 1]})
        grid = np.geomspace(x_lim[0], x_lim[1], 400)
        reach = [hit[front & (p95 <= g)].max(initial=0.0) for g in grid]
        pareto.fill_between(grid, 0, reach, step="post", color=ROLE["grid"], lw=0,
                            label="dominated: another router is better on both")
        for i, r in enumerate(ROUTERS):
            picked = r == router
            # NOTE: x_limits() keeps every finite P95 on the axis; NaN (no short request
            # admitted) has no point, and the legend says so.
            no_p95 = "  (no short P95: n=0)" if not np.isfinite(p95[i]) else ""
            pareto.plot(p95[i], hit[i], MARKERS[r], ms=12 if picked else 8,
                        color=PICKED if picked else ROLE["neutral"],
                        mec=ROLE["reference"] if front[i] else "white", mew=1.5,
                        label=brief(pareto, f"{r}: SLO met {slo[i]:.0f}%"
                                    + ("  (picked)" if picked else "") + no_p95,
                                    f"{r}: SLO {slo[i]:.0f}%" + (" (no P95)" if no_p95 else "")))
        pareto.set_xscale("log")
        pareto.set_xlim(*x_lim)
        ticks = [v for v in NICE if x_lim[0] <= v <= x_lim[1]]
        if len(ticks) > 9:  # keep about one label per half decade on a wide axis
            ticks = [v for v in ticks if round(v / 10 ** math.floor(math.log10(v))) in (1, 5)]
        pareto.set_xticks(ticks, [_tick_text(v) for v in ticks])
        pareto.minorticks_off()
        pareto.set_ylim(0, 100)
        pareto.set_xlabel("P95 TTFT of admitted short requests (s, log)  ← better")
        pareto.set_ylabel("prefix-cache token hit rate (%)  ↑ better")
        pareto.set_title("Pareto: hit rate vs short P95 TTFT (black edge: on the front)")
        pareto.legend(loc="lower right", fontsize=7, title=f"{rate} req/s; c{FAIL_CLUSTER} down "
                      f"{fail_at}-{fail_at + DOWN_S:g} s", title_fontsize=7)

        y = np.arange(len(ROUTERS))
        loads.barh(y, cv, color=[PICKED if r == router else ROLE["neutral"] for r in ROUTERS],
                   height=0.6)
        for i, r in enumerate(ROUTERS):
            mx = runs[r].summary.load.max_over_mean
            loads.text(cv[i] + 0.01, i, brief(loads, f"{cv[i]:.2f}  (max {mx:.2f}× mean)",
                                              f"{cv[i]:.2f} (max {mx:.2f}×)"), va="center",
                       fontsize=7)
        loads.set_yticks(y, list(ROUTERS), fontsize=8)
        loads.invert_yaxis()
        loads.set_xlim(0, max(0.6, float(cv.max()) * 1.6))
        loads.set_xlabel("CV of requests served per cluster  ← more even")
        loads.set_title("Load balance over the run")
        loads.grid(False, axis="y")
    snap_layout(fig)
    pick = ROUTERS.index(router)
    metrics: dict[str, float | int | bool | str] = {
        "router": router,
        "picked_on_front": bool(front[pick]),
        "front": ",".join(r for r, f in zip(ROUTERS, front, strict=True) if f),
    }
    for i, r in enumerate(ROUTERS):
        metrics |= {f"{r}_short_p95_s": float(p95[i]), f"{r}_hit_rate": float(hit[i] / 100),
                    f"{r}_load_cv": float(cv[i]), f"{r}_slo_attainment": float(slo[i] / 100)}
    return FigureResult(fig, metrics)
