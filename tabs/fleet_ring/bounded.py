"""Figures: consistent hashing with bounded loads; the cap c trades key affinity for balance.

fleet_ring_bounded shows the loads at one c; fleet_ring_bounded_tradeoff sweeps c. The guarantee
is on whole requests: no cluster ends above ceil(c x mean) (the cap of the last placement,
core.fleet.ring.bounded_capacity), which can sit a little above c x mean; the balance panel
shades only what lies above that bound.
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Patch

from core.experiments.fleet_ring import (
    C_GRID,
    PREFIXES,
    REQUESTS,
    bound_over_mean,
    bounded_at,
    bounded_sweep_of,
)
from tabs.figure import FigureResult, lab_figure, snap_layout
from tabs.fleet_ring.common import cluster_colors, cluster_labels
from tabs.palette import ROLE

ZIPF = ((0.0, "uniform keys", "#0072B2"), (1.2, "Zipf s = 1.2", "#E69F00"))
HOT_S = 1.2  # the per-cluster panel shows the skewed workload, where the bound matters most
Y_TOP = 4.0
C_FINE = np.linspace(1.0, 2.0, 401)  # the bound drawn as a staircase, exact at each point and
# held over the interval to its left (where="pre"), so it never shades an attainable load

def _tag(s: float) -> str:
    return f"s{s:g}".replace(".", "_")


def fleet_ring_bounded(vnodes: int, clusters: int, c: float, seed: int) -> FigureResult:
    """One point: with the bound, no cluster ends above the cap (the skewed workload)."""
    hot = bounded_at(HOT_S, c, clusters, vnodes, seed)
    free = bounded_sweep_of(HOT_S, clusters, vnodes, seed)[-1]
    mean = REQUESTS / clusters
    with lab_figure(3.6) as fig:
        ax = fig.subplots()
        x = np.arange(clusters)
        ax.bar(x, free.loads, width=0.8, color="none", edgecolor=ROLE["neutral"], hatch="///",
               lw=0.8, label=f"plain ring: hottest {free.max_over_mean:.2f}× the mean")
        ax.bar(x, hot.loads, width=0.5, color=cluster_colors(clusters))
        ax.axhline(hot.cap, color=ROLE["reference"], ls="--", lw=1.2,
                   label=f"cap ⌈c·mean⌉ = {hot.cap}")
        ax.axhline(mean, color=ROLE["annotation"], ls=":", lw=1, label=f"mean {mean:g}")
        ax.set_xticks(x, cluster_labels(clusters))
        ax.set_xlim(-0.6, clusters - 0.4)
        ax.set_ylim(0, max(float(free.loads.max()), hot.cap) * 1.08)
        ax.set_xlabel(
            f"cluster (Zipf s = {HOT_S} keys: {REQUESTS:,} requests, {PREFIXES} prefixes)")
        ax.set_ylabel("requests placed")
        ax.set_title(f"c = {c:g}: hottest {int(hot.loads.max())} = {hot.max_over_mean:.3f}× "
                     "the mean, within the cap")
        proxy = Patch(color=ROLE["neutral"], label=f"bounded, c = {c:g}")
        ax.legend(handles=[proxy, *ax.get_legend_handles_labels()[0]], loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    snap_layout(fig)
    tag = _tag(HOT_S)
    metrics: dict[str, float | int | bool] = {
        "c": c, "cap_zipf_hot": hot.cap, "max_load_zipf_hot": int(hot.loads.max()),
        f"max_over_mean_{tag}": hot.max_over_mean, "bound_over_mean": bound_over_mean(c, clusters),
        f"max_over_mean_unbounded_{tag}": free.max_over_mean,
        f"never_above_cap_{tag}": hot.within_cap}
    return FigureResult(fig, metrics)


def fleet_ring_bounded_tradeoff(vnodes: int, clusters: int, c: float, seed: int) -> FigureResult:
    """Two points, a panel each: a tighter c lowers the hottest load, and spills keys."""
    sweeps = {s: bounded_sweep_of(s, clusters, vnodes, seed) for s, _, _ in ZIPF}
    now = {s: bounded_at(s, c, clusters, vnodes, seed) for s, _, _ in ZIPF}
    cs = np.array(C_GRID)
    with lab_figure(3.8) as fig:
        balance, affinity = fig.subplots(1, 2)
        bound = np.array([bound_over_mean(float(x), clusters) for x in C_FINE])
        balance.fill_between(C_FINE, bound, Y_TOP, step="pre", color=ROLE["grid"], lw=0)
        balance.step(C_FINE, bound, where="pre", color=ROLE["reference"], lw=1, ls="--")
        balance.text(1.03, Y_TOP - 0.12, "dashed: the bound ⌈c·mean⌉ / mean\nshaded: impossible",
                     va="top", color=ROLE["annotation"])
        for s, label, color in ZIPF:
            runs = sweeps[s]
            free = runs[-1].max_over_mean
            if free <= Y_TOP:
                balance.axhline(free, color=color, ls=":", lw=1.2)
                above = free > 1.5  # the uniform line sits just above its own curve: below
                balance.text(1.98, free + (0.06 if above else -0.06), f"no bound: {free:.2f}×",
                             ha="right", va="bottom" if above else "top", color=color)
            balance.plot(cs, [r.max_over_mean for r in runs[:-1]], "o-", ms=3, color=color)
            affinity.plot(cs, [r.on_primary * 100 for r in runs[:-1]], "o-", ms=3, color=color,
                          label=label)
            balance.plot([c], [now[s].max_over_mean], "o", color=color, ms=8, mec="white", mew=1.2)
            affinity.plot([c], [now[s].on_primary * 100], "o", color=color, ms=8, mec="white",
                          mew=1.2)
        for ax in (balance, affinity):
            ax.axvline(c, color=ROLE["annotation"], lw=0.8)
            ax.set_xlim(1.0, 2.0)
            ax.set_xlabel("capacity factor c")
        balance.set_ylim(0.9, Y_TOP)
        balance.set_ylabel("hottest load / mean")
        balance.set_title("Tighter c: a cooler hottest")
        affinity.set_ylim(0, 105)
        affinity.set_ylabel("% on their ring primary")
        affinity.set_title("Tighter c: more keys spill")
        affinity.legend(loc="lower right")
    snap_layout(fig)
    metrics: dict[str, float | int | bool] = {
        "c": c, "bound_over_mean": bound_over_mean(c, clusters)}
    for s, _, _ in ZIPF:
        metrics |= {
            f"max_over_mean_{_tag(s)}": now[s].max_over_mean,
            f"max_over_mean_unbounded_{_tag(s)}": sweeps[s][-1].max_over_mean,
            f"on_primary_{_tag(s)}": now[s].on_primary,
        }
    return FigureResult(fig, metrics)
