"""Figure: requests outstanding per cluster through the failure, the companion of the failover
timeline: left, every cluster over time up to the cursor (later times faint); right, the state
at the cursor."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.colors import PowerNorm
from matplotlib.patches import Rectangle

from core.experiments.fleet_sim import AT_MAX, DOWN_S, FAIL_CLUSTER, cursor_words, fleet_run
from tabs.figure import FigureResult, lab_figure, snap_layout
from tabs.fleet_ring.common import cluster_colors
from tabs.palette import ROLE

LOAD_MAX = 16  # colour scale top at least: outstanding requests per cluster (sqrt scale)


def load_ticks(vmax: int) -> list[int]:
    """Colour-bar ticks even on the sqrt scale (0, 1, 4, 9, 16 for 16), ending at vmax itself."""
    return sorted({round(vmax * (j / 4) ** 2) for j in range(5)})


def fleet_sim_load(rate: int, fail_at: int, router: str, seed: int,
                   at_s: int = AT_MAX) -> FigureResult:
    res = fleet_run(rate, fail_at, router, seed)
    t_end = math.ceil(float(res.records.arrival[-1]) / 5) * 5
    times, load = res.load_times, res.load_series.T  # (bins,), (clusters, bins)
    n = load.shape[0]
    load_max = int(load.max())
    vmax = max(LOAD_MAX, load_max)  # data-driven: the darkest cell is the true maximum
    i = int(np.searchsorted(times, at_s, side="right")) - 1  # last sample at or before at_s
    now = load[:, max(i, 0)] if i >= 0 else np.zeros(n)
    down = fail_at <= at_s < fail_at + DOWN_S
    colors = cluster_colors(n)
    with lab_figure(4.2) as fig:
        heat, bars = fig.subplots(1, 2, sharey=True, gridspec_kw={"width_ratios": [3.2, 1]})
        img = heat.imshow(load, aspect="auto", cmap="Greys",
                          norm=PowerNorm(0.5, vmin=0, vmax=vmax), origin="lower",
                          interpolation="nearest",
                          extent=(float(times[0]), float(times[-1]), -0.5, n - 0.5))
        heat.set_yticks(range(n), [f"c{k}" for k in range(n)])
        for label, color in zip(heat.get_yticklabels(), colors, strict=True):
            label.set_color(color)
            label.set_fontweight("bold")
        heat.grid(False)
        heat.add_patch(Rectangle((fail_at, FAIL_CLUSTER - 0.5), DOWN_S, 1, fill=False,
                                 hatch="////", edgecolor=ROLE["rejected"], lw=0.8))
        if at_s < t_end:
            heat.axvspan(at_s, t_end, color="white", alpha=0.75, lw=0)
            heat.axvline(at_s, color=ROLE["replay"], lw=2.2)
        heat.set_xlim(0, t_end)
        heat.set_xlabel("time (s)")
        heat.set_ylabel("cluster")
        heat.set_title(f"Queued + prefilling per cluster, {cursor_words(at_s, t_end)} "
                       f"(c{FAIL_CLUSTER} hatched: down)", fontsize=10)
        bar = fig.colorbar(img, ax=heat, pad=0.01, fraction=0.04, ticks=load_ticks(vmax),
                           location="right")
        bar.ax.set_ylabel("requests" if load_max <= LOAD_MAX else f"requests (max {load_max})",
                          fontsize=9, labelpad=2)
        bar.ax.tick_params(labelsize=9)
        t_now = float(times[max(i, 0)]) if i >= 0 else 0.0
        bars.barh(range(n), now, color=colors, height=0.7)
        for k, v in enumerate(now):
            gone = down and k == FAIL_CLUSTER
            bars.text(v, k, f" {int(v)}" + (" (down)" if gone else ""), va="center",
                      ha="left", fontsize=9, color=ROLE["rejected"] if gone else "black",
                      fontweight="bold" if gone else "normal")
        bars.set_xlim(0, max(vmax, 1) * 1.25)
        bars.set_xlabel("outstanding")
        bars.set_title(f"at t = {t_now:.1f} s", fontsize=10)
        for ax in (heat, bars):
            ax.tick_params(labelsize=9)
    snap_layout(fig)
    metrics = {
        "router": router, "at_s": at_s, "complete": at_s >= t_end, "sample_time_s": t_now,
        "load_max": load_max, "load_at_cursor_total": int(now.sum()),
        "load_at_cursor_max": int(now.max(initial=0)),
        "busiest_at_cursor": f"c{int(np.argmax(now))}" if now.any() else "",
        "failed_cluster_down_at_cursor": down,
    }
    return FigureResult(fig, metrics)
