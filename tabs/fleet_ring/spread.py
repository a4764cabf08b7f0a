"""Figure: load skew against the vnode count, with the 1/sqrt(V) rule and the sampling floor."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.experiments.fleet_ring import DRAWS, SEED_VNODES, SWEEP_V
from core.fleet.metrics import load_stats
from core.fleet.ring_arrays import keyspace_shares, ring_view, route_counts, session_array
from core.fleet.spread import noise_floor_cv, rule_of_thumb_cv
from core.fleet.spread_arrays import session_sweep, share_sweep
from tabs.figure import (
    Arrangement,
    FigureResult,
    Projector,
    arranged_by,
    brief,
    lab_figure,
    snap_layout,
)
from tabs.palette import ROLE

EXACT = "#0072B2"  # this ring's exact keyspace shares
SAMPLED = "#56B4E9"  # this ring's routed sessions (shares plus sampling noise)
# A projector: one legend below both panels, in short words; shorter titles and axis labels
LOOK = Projector(
    words={"vnodes per cluster V (log scale)": "vnodes per cluster V",
           "CV of load across clusters (std / mean)": "CV of load (std / mean)",
           "max / mean load (hottest cluster)": "hottest / mean load"},
    legends="below")


@dataclass(frozen=True, kw_only=True)
class SpreadLayout:
    naive_x: float  # the "naive design" note's x, as a multiple of its line's V
    naive_ha: str  # ... and its alignment: "right" ends it left of the line


# A projector: the note right of its line, clear of the (larger) y tick labels.
SPREAD = Arrangement(normal=SpreadLayout(naive_x=0.93, naive_ha="right"),
                     projector=SpreadLayout(naive_x=1.07, naive_ha="left"))


def _mark(ax, v: int, y: float, color: str) -> None:
    ax.plot([v], [y], "o", color=color, ms=7, mec="white", mew=1.2, zorder=5)


@arranged_by(SPREAD)
def fleet_ring_spread(vnodes: int, clusters: int, sessions: int, seed: int, *,
                      lay: SpreadLayout) -> FigureResult:
    sweep = share_sweep(clusters, SWEEP_V, DRAWS)
    routed = session_sweep(clusters, SWEEP_V, sessions, seed)
    view = ring_view(clusters, vnodes, seed)
    share = load_stats(keyspace_shares(view))
    counted = load_stats(route_counts(view, session_array(sessions)))
    this = share_sweep(clusters, SWEEP_V, (seed,))
    floor = noise_floor_cv(clusters, sessions)
    v = np.array(SWEEP_V, dtype=float)
    with lab_figure(4.0, look=LOOK) as fig:
        left, right = fig.subplots(1, 2)
        for ax, band, mine, counted_sweep, now_exact, now_counted in (
            (left, sweep.cv, this.cv[0], routed.cv, share.cv, counted.cv),
            (right, sweep.max_over_mean, this.max_over_mean[0], routed.max_over_mean,
             share.max_over_mean, counted.max_over_mean),
        ):
            # every draw a dot, spread a little sideways on the log axis so none hides another
            jitter = 2.0 ** np.linspace(-0.18, 0.18, len(DRAWS))  # (D,)
            ax.scatter((v[None, :] * jitter[:, None]).ravel(), band.ravel(), s=7, lw=0,
                       color=ROLE["neutral"], alpha=0.7, zorder=2,
                       label=brief(ax, f"each of {len(DRAWS)} ring draws",
                                   f"{len(DRAWS)} ring draws"))
            ax.plot(v, band.mean(axis=0), color=ROLE["neutral"], lw=1.2, label="mean of draws")
            ax.plot(v, mine, "-", color=EXACT,
                    label=brief(ax, f"draw {seed}: keyspace shares (exact)",
                                f"draw {seed}: exact shares"))
            ax.plot(v, counted_sweep, ":", color=SAMPLED, lw=1.8,
                    label=brief(ax, f"draw {seed}: {sessions:,} sessions routed",
                                f"draw {seed}: {sessions:,} sessions"))
            _mark(ax, vnodes, now_exact, EXACT)
            _mark(ax, vnodes, now_counted, SAMPLED)
            ax.axvline(vnodes, color=ROLE["annotation"], lw=0.8)
            ax.axvline(SEED_VNODES, color=ROLE["rejected"], lw=1, ls=(0, (2, 2)))
            ax.set_xscale("log", base=2)
            ax.set_xlim(2**-0.3, 2**8.3)  # room for the jittered dots at both ends
            ax.set_xticks(v, [str(int(x)) for x in SWEEP_V])
            ax.set_xlabel("vnodes per cluster V (log scale)")
            ax.minorticks_off()
        rule = [rule_of_thumb_cv(x) for x in SWEEP_V]
        left.plot(v, rule, "--", color=ROLE["reference"], lw=1.2, label="rule: 1/√V")
        left.axhline(floor, color=ROLE["annotation"], ls="-.", lw=1,
                     label=brief(left, f"sampling floor √((N-1)/S) = {floor:.3f}",
                                 f"sampling floor {floor:.3f}"))
        left.set_yscale("log")
        left.set_ylim(0.005, 2)
        left.set_yticks([0.01, 0.03, 0.1, 0.3, 1], ["0.01", "0.03", "0.1", "0.3", "1"])
        left.minorticks_off()
        left.set_ylabel("CV of load across clusters (std / mean)")
        left.set_title(brief(left, f"Skew falls as 1/√V: CV {share.cv:.2f} at V = {vnodes}",
                             f"CV {share.cv:.2f} at V = {vnodes}"))
        left.text(SEED_VNODES * lay.naive_x, 0.02, f"naive design: V = {SEED_VNODES}",
                  color=ROLE["rejected"], fontsize=7, ha=lay.naive_ha,
                  transform=left.get_xaxis_transform())
        left.legend(loc="upper right", fontsize=7)
        right.axhline(1, color=ROLE["reference"], lw=1, ls="--", label="perfectly even")
        right.set_ylim(0.9, 3.5)
        right.set_ylabel("max / mean load (hottest cluster)")
        k = SWEEP_V.index(vnodes) if vnodes in SWEEP_V else None
        spread = (f"; draws {sweep.max_over_mean[:, k].min():.2f}-"
                  f"{sweep.max_over_mean[:, k].max():.2f}×" if k is not None else "")
        right.set_title(brief(right, f"Hottest at V = {vnodes}: {share.max_over_mean:.2f}× mean"
                              + spread, f"Hottest: {share.max_over_mean:.2f}× mean" + spread))
        right.legend(loc="upper right", fontsize=7)
    snap_layout(fig)
    metrics = {
        "vnodes": vnodes,
        "share_cv": share.cv,
        "sessions_cv": counted.cv,
        "rule_of_thumb_cv": rule_of_thumb_cv(vnodes),
        "sampling_floor_cv": floor,
        "share_max_over_mean": share.max_over_mean,
        "sessions_max_over_mean": counted.max_over_mean,
        "draws_mean_cv_v8": float(sweep.cv[:, SWEEP_V.index(8)].mean()),
        "draws_mean_cv_v128": float(sweep.cv[:, SWEEP_V.index(128)].mean()),
        "draws_min_max_over_mean_v8": float(sweep.max_over_mean[:, SWEEP_V.index(8)].min()),
        "draws_max_max_over_mean_v8": float(sweep.max_over_mean[:, SWEEP_V.index(8)].max()),
    }
    return FigureResult(fig, metrics)
