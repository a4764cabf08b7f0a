"""Figure: TTFT of every request over time through a cluster failure, up to a time cursor
(requests arriving later are drawn faint). The load per cluster is its companion figure
(tabs/fleet_sim/load.py)."""

from __future__ import annotations

import math

import numpy as np

from core.experiments.fleet_sim import AT_MAX, DOWN_S, FAIL_CLUSTER, cursor_words, fleet_run
from core.fleet.failover import failover_windows, windowed_percentile
from tabs.figure import FigureResult, lab_figure, snap_layout
from tabs.fleet_sim.common import CLASS_COLORS
from tabs.palette import ROLE

WINDOW_S = 2.5
Y_LIM = (0.02, 30.0)  # default TTFT axis; the top grows with the data (never clips there)
DATA_FRAC = 0.86  # every TTFT stays below this fraction of the axis height (the legend is above)
Y_TICKS = (0.03, 0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000, 3000, 10_000, 30_000, 100_000)
CLIP_COLOR = "#CC79A7"  # TTFTs below the axis floor, drawn as triangles on the bottom edge


def ttft_top(max_ttft: float) -> float:
    """Top of the log TTFT axis: Y_LIM's, or higher so max_ttft sits at DATA_FRAC of the height."""
    if not math.isfinite(max_ttft) or max_ttft <= 0:
        return Y_LIM[1]
    lo = math.log10(Y_LIM[0])
    return max(Y_LIM[1], 10 ** (lo + (math.log10(max_ttft) - lo) / DATA_FRAC))


def recovery_words(seconds: float | None) -> str:
    """The title's recovery clause: the measured time, or what happened instead, in words."""
    if seconds is None:
        return "short P95 not recovered before the rejoin"
    if math.isnan(seconds):
        return "recovery not measured: no short request before the failure"
    return f"short P95 back in {seconds:g} s"


def fleet_sim_timeline(rate: int, fail_at: int, router: str, seed: int,
                       at_s: int = AT_MAX) -> FigureResult:
    res = fleet_run(rate, fail_at, router, seed)
    rec, fo, s = res.records, res.failover, res.summary
    assert fo is not None
    t_end = math.ceil(float(rec.arrival[-1]) / 5) * 5
    adm = rec.admitted
    seen = rec.arrival <= at_s  # arrived by the cursor: drawn; later arrivals drawn faint
    plain = adm & ~rec.moved & ~rec.requeued
    edges = np.arange(0.0, t_end + WINDOW_S, WINDOW_S)
    short = adm & (rec.klass == 0)
    p95 = windowed_percentile(rec.arrival[short], rec.ttft[short], edges)
    slo_short = res.config.slo_s[0]
    with lab_figure(4.6) as fig:
        top = fig.subplots()
        top.axvspan(fail_at, fail_at + DOWN_S, color=ROLE["rejected"], alpha=0.08, lw=0)
        top.axvline(fail_at, color=ROLE["reference"], lw=1.2)
        top.axvline(fail_at + DOWN_S, color=ROLE["reference"], lw=1.2, ls="--")
        y_top = ttft_top(float(rec.ttft[adm].max()) if adm.any() else math.nan)
        ttft = np.maximum(rec.ttft, Y_LIM[0])
        low = adm & (rec.ttft < Y_LIM[0])
        later = adm & ~seen
        if later.any():
            top.scatter(rec.arrival[later], ttft[later], s=3, lw=0, color=ROLE["neutral"],
                        alpha=0.12)
        for k, name in enumerate(("short", "long")):
            m = plain & (rec.klass == k) & seen
            top.scatter(rec.arrival[m], ttft[m], s=4 if k == 0 else 6, lw=0,
                        color=ROLE["neutral"] if k == 0 else CLASS_COLORS["long"],
                        alpha=0.5 if k == 0 else 0.7, label=f"{name} request")
        rq, mv = rec.requeued & seen, rec.moved & seen
        top.scatter(rec.arrival[rq], ttft[rq], s=16, color=ROLE["inflight"],
                    marker="s", lw=0, label=f"requeued off c{FAIL_CLUSTER} ({int(rq.sum())})")
        top.scatter(rec.arrival[mv], ttft[mv], s=24, color=ROLE["miss"], lw=0,
                    marker="D", label=f"moved session, cold ({int(mv.sum())})")
        # NOTE: the top grows with the data; a TTFT under the floor is drawn on the bottom edge as
        # a triangle, counted in the legend (none with DEMO_SIM: TTFT >= one decode step).
        n_low = int(low.sum())
        if n_low:
            top.scatter(rec.arrival[low], ttft[low], s=26, marker="v", color=CLIP_COLOR,
                        edgecolor="black", lw=0.4, clip_on=False, zorder=6,
                        label=f"< {Y_LIM[0]:g} s, on the edge ({n_low})")
        mid = (edges[:-1] + edges[1:]) / 2
        done = edges[1:] <= max(at_s, 0) + 1e-9  # windows closed by the cursor
        top.step(mid[done], p95[done], where="mid", color=ROLE["reference"], lw=1.6,
                 label=f"short P95 per {WINDOW_S:g} s")
        if at_s < t_end:
            top.axvline(at_s, color=ROLE["replay"], lw=2.2, zorder=7)
            top.text(at_s, 1.0, f" t = {at_s} s", transform=top.get_xaxis_transform(),
                     ha="left", va="top", fontsize=10, fontweight="bold", color=ROLE["replay"])
        top.axhline(slo_short, color=ROLE["hit"], ls=":", lw=1.2,
                    label=f"short SLO {slo_short:g} s")
        top.set_yscale("log")
        top.set_ylim(Y_LIM[0], y_top)
        ticks = [v for v in Y_TICKS if Y_LIM[0] <= v <= y_top]
        top.set_yticks(ticks, [f"{v:g}" if v < 1000 else f"{v / 1000:g}k" for v in ticks])
        top.minorticks_off()
        top.set_ylabel("TTFT (s, log)")
        top.set_title(f"{router}, {cursor_words(at_s, t_end)}: c{FAIL_CLUSTER} fails at "
                      f"{fail_at} s, rejoins cold at {fail_at + DOWN_S:g} s; "
                      f"{recovery_words(fo.recovery_time_s)}", fontsize=10, pad=46)
        top.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=3, fontsize=9,
                   markerscale=1.4, handletextpad=0.2, columnspacing=1.0, borderaxespad=0.0)
        top.text(fail_at, Y_LIM[0] * 1.1, f" c{FAIL_CLUSTER} fails", fontsize=9, va="bottom")
        top.text(fail_at + DOWN_S, Y_LIM[0] * 1.1, f" c{FAIL_CLUSTER} rejoins", fontsize=9,
                 va="bottom")
        top.set_xlim(0, t_end)
        top.set_xlabel("arrival time (s)")
        top.tick_params(labelsize=9)

    snap_layout(fig)
    windows = failover_windows(rec, fo)
    rec_s = fo.recovery_time_s
    metrics = {
        "router": router,
        "requests": rec.n,
        "sessions_bound": fo.sessions_bound,
        "sessions_moved": fo.sessions_moved,
        "requeued": fo.requeued,
        "interrupted": fo.interrupted,
        "cache_lost_tokens": fo.cache_lost_tokens,
        # NaN (never a made-up number) when not recovered, undefined, or nothing moved
        "short_recovered_before_rejoin": rec_s is not None and not math.isnan(rec_s),
        "short_recovery_time_s": math.nan if rec_s is None else rec_s,
        "short_p95_before_s": windows.short_p95_before_s,
        "short_p95_while_down_s": windows.short_p95_while_down_s,
        "p95_moved_s": windows.moved_p95_s,
        "started_on_failed_while_down": windows.started_on_failed_while_down,
        "hit_rate": s.hit_rate,
        "at_s": at_s, "complete": at_s >= t_end,
        "arrived_by_cursor": int(seen.sum()),
        "moved_by_cursor": int(mv.sum()),
        "requeued_by_cursor": int(rq.sum()),
    }
    return FigureResult(fig, metrics)
