"""Figure: consistent hashing with bounded loads; the cap c trades key affinity for balance.

The guarantee is on whole requests: no cluster ends above ceil(c x mean) (the cap of the last
placement, core.fleet.ring.bounded_capacity), which can sit a little above c x mean; the balance
panel shades only what lies above that bound.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from matplotlib.patches import Patch

from core.fleet.ring import bounded_capacity
from core.fleet.spread_arrays import BoundedRun, bounded_sweep
from tabs.figure import FigureResult, lab_figure, snap_layout
from tabs.fleet_ring.common import cluster_colors, cluster_labels
from tabs.palette import ROLE

C_GRID = tuple(round(1.0 + 0.1 * i, 2) for i in range(11))
ZIPF = ((0.0, "uniform keys", "#0072B2"), (1.2, "Zipf s = 1.2", "#E69F00"))
HOT_S = 1.2  # the per-cluster panel shows the skewed workload, where the bound matters most
PREFIXES, REQUESTS = 200, 2000
Y_TOP = 4.0
C_FINE = np.linspace(1.0, 2.0, 401)  # the bound drawn as a staircase, exact at each point and
# held over the interval to its left (where="pre"), so it never shades an attainable load


def bound_over_mean(c: float, clusters: int, requests: int = REQUESTS) -> float:
    """ceil(c x mean) / mean: the most any cluster can hold after `requests` placements."""
    return bounded_capacity(requests - 1, clusters, c) / (requests / clusters)


@lru_cache(maxsize=32)
def _sweep(zipf_s: float, clusters: int, vnodes: int, seed: int) -> tuple[BoundedRun, ...]:
    """C_GRID then c = inf (the plain ring) for one Zipf draw; c itself is drawn separately."""
    return tuple(bounded_sweep(C_GRID + (math.inf,), zipf_s, clusters, vnodes, PREFIXES, REQUESTS,
                               seed, draw=seed))


def _at(zipf_s: float, c: float, clusters: int, vnodes: int, seed: int) -> BoundedRun:
    return bounded_sweep((c,), zipf_s, clusters, vnodes, PREFIXES, REQUESTS, seed, draw=seed)[0]


def fleet_ring_bounded(vnodes: int, clusters: int, c: float, seed: int) -> FigureResult:
    sweeps = {s: _sweep(s, clusters, vnodes, seed) for s, _, _ in ZIPF}
    now = {s: _at(s, c, clusters, vnodes, seed) for s, _, _ in ZIPF}
    hot, hot_free = now[HOT_S], sweeps[HOT_S][-1]
    mean = REQUESTS / clusters
    with lab_figure(4.0) as fig:
        loads, balance, affinity = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.2, 1, 1]})
        x = np.arange(clusters)
        loads.bar(x, hot_free.loads, width=0.8, color="none", edgecolor=ROLE["neutral"],
                  hatch="///", lw=0.8, label="plain ring (no bound)")
        loads.bar(x, hot.loads, width=0.5, color=cluster_colors(clusters))
        loads.axhline(hot.cap, color=ROLE["reference"], ls="--", lw=1.2,
                      label=f"cap ⌈c·mean⌉ = {hot.cap}")
        loads.axhline(mean, color=ROLE["annotation"], ls=":", lw=1, label=f"mean {mean:g}")
        loads.set_xticks(x, cluster_labels(clusters), fontsize=8 if clusters <= 8 else 6)
        loads.set_xlim(-0.6, clusters - 0.4)
        loads.set_ylim(0, max(float(hot_free.loads.max()), hot.cap) * 1.3)
        loads.set_xlabel("cluster")
        loads.set_ylabel(f"requests placed (of {REQUESTS:,})")
        loads.set_title(f"Hottest {int(hot.loads.max())} = {hot.max_over_mean:.3f}× the mean")
        proxy = Patch(color=ROLE["neutral"], label=f"bounded, c = {c:g}")
        loads.legend(handles=[*loads.get_legend_handles_labels()[0], proxy], loc="upper left",
                     fontsize=7, ncols=2)

        cs = np.array(C_GRID)
        bound = np.array([bound_over_mean(float(x), clusters) for x in C_FINE])
        balance.fill_between(C_FINE, bound, Y_TOP, step="pre", color=ROLE["grid"], lw=0,
                             label="above the bound: impossible")
        balance.step(C_FINE, bound, where="pre", color=ROLE["reference"], lw=1, ls="--",
                     label="bound ⌈c·mean⌉ / mean")
        for s, label, color in ZIPF:
            runs = sweeps[s]
            free = runs[-1].max_over_mean
            if free <= Y_TOP:
                balance.axhline(free, color=color, ls=":", lw=1.2)
            balance.plot(cs, [r.max_over_mean for r in runs[:-1]], "o-", ms=3, color=color,
                         label=f"{label}; no bound {free:.2f}×")
            affinity.plot(cs, [r.on_primary * 100 for r in runs[:-1]], "o-", ms=3, color=color,
                          label=label)
            balance.plot([c], [now[s].max_over_mean], "o", color=color, ms=8, mec="white", mew=1.2)
            affinity.plot([c], [now[s].on_primary * 100], "o", color=color, ms=8, mec="white",
                          mew=1.2)
        balance.plot([], [], ":", color=ROLE["neutral"], label="dotted: no bound (c = ∞)")
        loads.text(0.99, 0.72, f"Zipf s = {HOT_S} keys:\n{PREFIXES} prefixes,\n"
                   f"{REQUESTS:,} requests", transform=loads.transAxes, ha="right", va="top",
                   fontsize=7, color=ROLE["annotation"])
        for ax in (balance, affinity):
            ax.axvline(c, color=ROLE["annotation"], lw=0.8)
            ax.set_xlim(1.0, 2.0)
            ax.set_xlabel("capacity factor c")
        balance.set_ylim(0.9, Y_TOP)
        balance.set_ylabel("max / mean load")
        balance.set_title("Balance: max ≤ ⌈c·mean⌉")
        balance.legend(loc="upper left", fontsize=7)
        affinity.set_ylim(0, 105)
        affinity.set_ylabel("% of requests on their ring primary")
        affinity.set_title("Affinity: a tight c spills keys")
        affinity.legend(loc="lower right", fontsize=7)
    snap_layout(fig)
    metrics: dict[str, float | int | bool] = {
        "c": c, "cap_zipf_hot": hot.cap, "max_load_zipf_hot": int(hot.loads.max()),
        "bound_over_mean": bound_over_mean(c, clusters)}
    for s, _, _ in ZIPF:
        tag = f"s{s:g}".replace(".", "_")
        metrics |= {
            f"max_over_mean_{tag}": now[s].max_over_mean,
            f"max_over_mean_unbounded_{tag}": sweeps[s][-1].max_over_mean,
            f"on_primary_{tag}": now[s].on_primary,
            f"never_above_cap_{tag}": now[s].within_cap,
        }
    return FigureResult(fig, metrics)
