"""Figure: the ring itself (vnode points and owned arcs) and each cluster's keyspace share."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import ListedColormap

from core.experiments.fleet_ring import EXAMPLE_KEY, ring_layout
from core.fleet.metrics import load_stats
from core.fleet.spread import rule_of_thumb_cv
from tabs.figure import FigureResult, Projector, brief, lab_figure, shorten, snap_layout
from tabs.fleet_ring.common import cluster_colors, cluster_labels
from tabs.palette import ROLE

ARC_BINS = 2048  # angular resolution of the drawn arcs (0.18 degrees); shares are exact
TWO_PI = 2 * np.pi
# A projector: the legend below both panels, off the bars (the axis's 3x fair share is too
# little room for it at a projector's size when one cluster owns most of the ring); the
# smaller ring holds only its point count, the example session is named under it
LOOK = Projector(legends="below")


def _theta(positions: np.ndarray) -> np.ndarray:
    return positions.astype(np.float64) / 2.0**64 * TWO_PI


def fleet_ring_layout(vnodes: int, clusters: int, sessions: int, seed: int) -> FigureResult:
    lay = ring_layout(vnodes, clusters, sessions, seed, ARC_BINS)
    view, shares, counts, key = lay.view, lay.shares, lay.counts, lay.key
    primary, secondary, arc_owner = lay.primary, lay.secondary, lay.arc_owner
    colors = cluster_colors(clusters)
    fair = 100.0 / clusters
    with lab_figure(4.6, look=LOOK) as fig:
        gs = fig.add_gridspec(1, 2, width_ratios=[1.0, 1.25])
        ring = fig.add_subplot(gs[0], projection="polar")
        bars = fig.add_subplot(gs[1])

        ring.set_theta_zero_location("N")
        ring.set_theta_direction(-1)  # clockwise, like route()
        edges = np.linspace(0, TWO_PI, ARC_BINS + 1)
        ring.pcolormesh(edges, [0.78, 1.0], arc_owner[None, :].astype(float),
                        cmap=ListedColormap(colors), vmin=-0.5, vmax=clusters - 0.5,
                        shading="flat", rasterized=False)
        ring.scatter(_theta(view.points), np.full(view.points.size, 1.07),
                     c=[colors[o] for o in view.owners], s=9 if view.points.size <= 512 else 3,
                     marker="o", linewidths=0, clip_on=False)
        tk = float(_theta(key)[0])
        ring.plot([tk, tk], [0.66, 0.78], color=ROLE["reference"], lw=1.2)
        ring.plot([tk], [0.66], "o", color=ROLE["reference"], ms=4)
        ring.set_ylim(0, 1.12)
        ring.set_yticks([])
        ring.set_xticks(np.arange(4) * TWO_PI / 4, ["0", "¼", "½", "¾"])
        ring.grid(False)
        ring.spines["polar"].set_visible(False)
        shorten(ring.text(0, 0, f"{view.points.size} points\n\n● session-{EXAMPLE_KEY}:\n"
                          f"c{primary}, then c{secondary}", ha="center", va="center",
                          transform=ring.transData), f"{view.points.size}\npoints")
        ring.set_xlabel(brief(ring, f"{clusters} clusters × {vnodes} vnodes, clockwise from 0",
                              f"● session-{EXAMPLE_KEY}: c{primary}, then c{secondary}"))
        ring.set_title(brief(ring, f"Ring, draw {seed}: arcs by owner",
                             f"{clusters} clusters × {vnodes} vnodes"), pad=14)

        x = np.arange(clusters)
        pct = shares * 100
        top = min(100.0, 3 * fair)
        bars.bar(x, np.minimum(pct, top), color=colors, edgecolor="white", width=0.75,
                 label="keyspace share (exact)")
        for k in np.flatnonzero(pct > top):
            bars.text(k, top * 0.97, f"{pct[k]:.0f}%", ha="center", va="top", fontsize=7,
                      color="white", fontweight="bold")
        bars.plot(x, np.minimum(counts / sessions * 100, top), "o", color=ROLE["reference"],
                  ms=4, label=f"sessions routed ({sessions:,} keys)")
        bars.axhline(fair, color=ROLE["reference"], ls="--", lw=1, label=f"fair 1/N = {fair:.1f}%")
        bars.set_xticks(x, cluster_labels(clusters), fontsize=8 if clusters <= 12 else 7)
        bars.set_xlim(-0.6, clusters - 0.4)
        bars.set_ylim(0, top)
        bars.set_xlabel("cluster")
        bars.set_ylabel("% of keyspace / of sessions")
        hi, lo = int(np.argmax(shares)), int(np.argmin(shares))
        ratio = shares[hi] / shares[lo]
        bars.set_title(f"Keyspace share: c{hi} owns {ratio:,.{1 if ratio < 100 else 0}f}× c{lo}'s")
        bars.legend(loc="upper right")  # above the bars: the axis runs to 3x the fair share

    snap_layout(fig)
    share_stats, count_stats = load_stats(shares), load_stats(counts)
    metrics = {
        "points": int(view.points.size),
        "max_share": float(shares.max()),
        "min_share": float(shares.min()),
        "max_over_min_share": float(shares.max() / shares.min()),
        "share_max_over_mean": share_stats.max_over_mean,
        "share_cv": share_stats.cv,
        "sessions_cv": count_stats.cv,
        "rule_of_thumb_cv": rule_of_thumb_cv(vnodes),
        "example_primary": primary,
        "example_secondary": secondary,
    }
    return FigureResult(fig, metrics)
