"""Shared pieces of the fleet tabs: the per-cluster palette and the ring figures' sweep grid."""

from __future__ import annotations

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
