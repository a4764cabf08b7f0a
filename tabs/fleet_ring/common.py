"""The per-cluster palette of both fleet tabs. The ring figures' sweeps:
core.experiments.fleet_ring."""

from __future__ import annotations

# Qualitative, one colour per cluster id on both fleet tabs (tab10 without grey, then light tab20).
CLUSTER_COLORS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
    "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
)


def cluster_colors(n: int) -> list[str]:
    return [CLUSTER_COLORS[k % len(CLUSTER_COLORS)] for k in range(n)]


def cluster_labels(n: int) -> list[str]:
    return [f"c{k}" for k in range(n)]
