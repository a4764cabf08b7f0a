"""Shared pieces of the fleet tabs: the per-cluster palette and cached sweeps over vnodes."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from matplotlib.figure import Figure

from core.fleet.metrics import load_stats
from core.fleet.views import removal_view, ring_view, route_counts, session_array

# Qualitative, one colour per cluster id on both fleet tabs (tab10 without grey, then light tab20).
CLUSTER_COLORS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
    "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
)
SWEEP_V = (1, 2, 4, 8, 16, 32, 64, 128, 256)
DRAWS = tuple(range(16))  # ring draws behind the "typical ring" band
SEED_VNODES = 8  # the seed demo's ring
REMOVED = 0  # the cluster removed here is the one the simulator fails


def cluster_colors(n: int) -> list[str]:
    return [CLUSTER_COLORS[k % len(CLUSTER_COLORS)] for k in range(n)]


def cluster_labels(n: int) -> list[str]:
    return [f"c{k}" for k in range(n)]


def noise_floor_cv(clusters: int, sessions: int) -> float:
    """CV of per-cluster counts from sampling alone on a perfectly fair ring: sqrt((N-1)/S)."""
    return math.sqrt((clusters - 1) / sessions)


@lru_cache(maxsize=16)
def session_cv_sweep(clusters: int, sessions: int, draw: int) -> tuple[np.ndarray, np.ndarray]:
    """(CV, max/mean) of sessions per cluster at each SWEEP_V for one ring draw."""
    stats = [load_stats(route_counts(ring_view(clusters, v, draw), session_array(sessions)))
             for v in SWEEP_V]
    return np.array([s.cv for s in stats]), np.array([s.max_over_mean for s in stats])


@lru_cache(maxsize=16)
def moved_sweep(clusters: int, sessions: int, draw: int) -> tuple[np.ndarray, np.ndarray]:
    """(moved fraction, removed cluster's share) at each SWEEP_V when cluster REMOVED leaves."""
    runs = [removal_view(clusters, v, sessions, REMOVED, draw) for v in SWEEP_V]
    return np.array([r.moved_fraction for r in runs]), np.array([r.removed_share for r in runs])



def snap_layout(fig: Figure) -> None:
    """Round every axes position to 1e-6 of the figure (a thousandth of a pixel).

    NOTE: the constrained-layout solve can differ in the last bit between runs of the same
    figure (kiwisolver's internal ordering), which occasionally moves one antialiased pixel;
    rounding after the solve makes the PNG bytes reproducible.
    """
    for ax in fig.axes:
        x0, y0, w, h = ax.get_position().bounds
        ax.set_position([round(x0, 6), round(y0, 6), round(w, 6), round(h, 6)])
