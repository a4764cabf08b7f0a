"""Figure: remove one cluster; only its sessions move, each to its old secondary (about 1/N)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from core.experiments.fleet_ring import REMOVED, SWEEP_V
from core.fleet.spread_arrays import removal_sweep, removal_view
from tabs.figure import (
    Arrangement,
    FigureResult,
    Projector,
    arranged_by,
    brief,
    lab_figure,
    snap_layout,
)
from tabs.fleet_ring.common import cluster_colors, cluster_labels
from tabs.palette import ROLE

CHECK = {True: "✓", False: "✗"}
# Normal mode lays the panels out by hand, as constrained layout did (figure fractions): the
# margins left of each panel grow by DIGIT per character of its longest y tick label (digits
# are equal-width in the lab font), the right edge is fixed and the panels share the rest 1.1 : 1.
BOTTOM, HEIGHT, RIGHT = 0.1114, 0.8299, 0.9854
LEFT0, GAP0, DIGIT = 0.0334, 0.0394, 0.007
RATIO = 1.1
# A projector: one legend below both panels (the room the bars kept for theirs goes to the
# bars), shorter titles and axis labels, the count alone in c0's empty bar
LOOK = Projector(words={"vnodes per cluster V (log scale)": "vnodes per cluster V"},
                 legends="below")


@dataclass(frozen=True, kw_only=True)
class RemovalLayout:
    bars_headroom: float  # the bars' axis top, as a multiple of the tallest bar


# A projector: the bars' legend joins the one below both panels, so the room above the bars
# that normal mode keeps for it goes to the bars.
REMOVAL = Arrangement(normal=RemovalLayout(bars_headroom=1.5),
                      projector=RemovalLayout(bars_headroom=1.1))


def _tick_chars(ax: Axes) -> int:
    """Characters of the longest y tick label inside the axis limits (as drawn)."""
    lo, hi = ax.get_ylim()
    ticks = [t for t in ax.get_yticks() if lo <= t <= hi]
    return max(len(s) for s in ax.yaxis.get_major_formatter().format_ticks(ticks))


def _place(fig: Figure) -> None:
    bars, sweep = fig.axes
    left = LEFT0 + DIGIT * _tick_chars(bars)
    gap = GAP0 + DIGIT * _tick_chars(sweep)
    w2 = (RIGHT - left - gap) / (1 + RATIO)
    bars.set_position([left, BOTTOM, RATIO * w2, HEIGHT])
    sweep.set_position([RIGHT - w2, BOTTOM, w2, HEIGHT])


@arranged_by(REMOVAL)
def fleet_ring_removal(vnodes: int, clusters: int, sessions: int, seed: int, *,
                       lay: RemovalLayout) -> FigureResult:
    r = removal_view(clusters, vnodes, sessions, REMOVED, seed)
    sweep_v = removal_sweep(clusters, SWEEP_V, sessions, REMOVED, seed)
    fractions, shares = sweep_v.moved_fraction, sweep_v.removed_share
    colors = cluster_colors(clusters)
    fair = sessions / clusters
    receivers = r.receivers
    # normal mode: fixed margins (_place): constrained layout was ~40% of a redraw
    with lab_figure(4.0, look=LOOK, place=_place) as fig:
        bars, sweep = fig.subplots(1, 2, gridspec_kw={"width_ratios": [RATIO, 1.0]})
        x = np.arange(clusters)
        kept = np.where(x == REMOVED, 0, r.before)
        bars.bar(x, kept, color=colors, width=0.75, edgecolor="white")
        bars.bar(x, r.gained, bottom=kept, color=ROLE["miss"], width=0.75, edgecolor="white",
                 hatch="///", label=f"from c{REMOVED} (cold cache)")
        bars.bar([REMOVED], [r.before[REMOVED]], color="none", width=0.75, ls="--",
                 edgecolor=colors[REMOVED], lw=1.2, label=f"c{REMOVED} before removal")
        bars.text(REMOVED, r.before[REMOVED] * 0.5,
                  brief(bars, f"{int(r.after[REMOVED])}\nrouted\nhere", f"{int(r.after[REMOVED])}"),
                  ha="center", va="center", fontsize=7, color=ROLE["reference"])
        bars.axhline(fair, color=ROLE["reference"], ls=":", lw=1, label="fair share S/N")
        ymax = max(float((kept + r.gained).max()), float(r.before.max())) * lay.bars_headroom
        bars.set_ylim(0, ymax)
        bars.set_xlim(-0.6, clusters - 0.4)
        bars.set_xticks(x, cluster_labels(clusters), fontsize=8 if clusters <= 12 else 7)
        bars.set_xlabel(brief(
            bars, f"cluster (only c{REMOVED}'s sessions moved {CHECK[r.only_removed_moved]}, "
            f"{r.to_old_secondary:.0%} to their old secondary)",
            f"only c{REMOVED}'s moved {CHECK[r.only_removed_moved]}, "
            f"{r.to_old_secondary:.0%} to old secondary"))
        bars.set_ylabel(f"sessions (of {sessions:,})")
        # y=1.0: a fixed title spot (no x ticks on top), so a draw skips measuring every axis
        bars.set_title(brief(bars, f"Remove c{REMOVED}: {r.moved:,} sessions move to "
                             f"{receivers} of {clusters - 1} clusters",
                             f"Remove c{REMOVED}: {r.moved:,} sessions move"), y=1.0)
        proxy = Patch(color=ROLE["neutral"], label="kept its own")
        bars.legend(handles=[proxy, *bars.get_legend_handles_labels()[0]], loc="upper left",
                    ncols=2)

        v = np.array(SWEEP_V, dtype=float)
        sweep.plot(v, fractions * 100, "o-", color=ROLE["miss"], ms=4,
                   label=f"moved (draw {seed})")
        sweep.plot(v, shares * 100, "-", color=ROLE["neutral"], lw=3, alpha=0.6, zorder=1,
                   label=f"c{REMOVED}'s share before")
        sweep.axhline(100 / clusters, color=ROLE["reference"], ls="--", lw=1,
                      label=f"1/N = {100 / clusters:.1f}%")
        sweep.plot([vnodes], [r.moved_fraction * 100], "o", color=ROLE["miss"], ms=8,
                   mec="white", mew=1.2, zorder=5)
        sweep.axvline(vnodes, color=ROLE["annotation"], lw=0.8)
        sweep.set_xscale("log", base=2)
        sweep.set_xlim(1, 256)
        sweep.set_xticks(v[::2], [str(int(a)) for a in SWEEP_V[::2]])
        sweep.minorticks_off()
        sweep.set_ylim(0, min(100.0, max(400 / clusters, float(fractions.max()) * 160)))
        sweep.set_xlabel("vnodes per cluster V (log scale)")
        sweep.set_ylabel("% of sessions moved")
        sweep.set_title(f"Moved {r.moved_fraction:.1%} ≈ c{REMOVED}'s {r.removed_share:.1%} share",
                        y=1.0)
        sweep.legend(loc="upper right")
    snap_layout(fig)
    metrics = {
        "removed": REMOVED,
        "moved": r.moved,
        "moved_fraction": r.moved_fraction,
        "removed_share": r.removed_share,
        "ideal_fraction": 1 / clusters,
        "only_removed_moved": r.only_removed_moved,
        "to_old_secondary": r.to_old_secondary,
        "routed_to_removed_after": int(r.after[REMOVED]),
        "receiving_clusters": receivers,
        "largest_receiver_share_of_moved": r.largest_receiver_share,
    }
    return FigureResult(fig, metrics)
