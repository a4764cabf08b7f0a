"""Figure: TTFT of every request over time through a cluster failure, and load per cluster."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.colors import PowerNorm
from matplotlib.patches import Rectangle

from core.fleet.failover import failover_windows, windowed_percentile
from tabs.figure import FigureResult, lab_figure, snap_layout
from tabs.fleet_ring.common import cluster_colors
from tabs.fleet_sim.common import CLASS_COLORS, DOWN_S, FAIL_CLUSTER, fleet_run
from tabs.palette import ROLE

WINDOW_S = 2.5
Y_LIM = (0.02, 30.0)  # default TTFT axis; the top grows with the data (never clips there)
DATA_FRAC = 0.86  # every TTFT stays below this fraction of the axis height (the legend is above)
Y_TICKS = (0.03, 0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000, 3000, 10_000, 30_000, 100_000)
LOAD_MAX = 16  # colour scale top at least: outstanding requests per cluster (sqrt scale)
CLIP_COLOR = "#CC79A7"  # TTFTs below the axis floor, drawn as triangles on the bottom edge


def ttft_top(max_ttft: float) -> float:
    """Top of the log TTFT axis: Y_LIM's, or higher so max_ttft sits at DATA_FRAC of the height."""
    if not math.isfinite(max_ttft) or max_ttft <= 0:
        return Y_LIM[1]
    lo = math.log10(Y_LIM[0])
    return max(Y_LIM[1], 10 ** (lo + (math.log10(max_ttft) - lo) / DATA_FRAC))


def load_ticks(vmax: int) -> list[int]:
    """Colour-bar ticks even on the sqrt scale (0, 1, 4, 9, 16 for 16), ending at vmax itself."""
    return sorted({round(vmax * (j / 4) ** 2) for j in range(5)})


def recovery_words(seconds: float | None) -> str:
    """The title's recovery clause: the measured time, or what happened instead, in words."""
    if seconds is None:
        return "short P95 not recovered before the rejoin"
    if math.isnan(seconds):
        return "recovery not measured: no short request before the failure"
    return f"short P95 back in {seconds:g} s"


def fleet_sim_timeline(rate: int, fail_at: int, router: str, seed: int) -> FigureResult:
    res = fleet_run(rate, fail_at, router, seed)
    rec, fo, s = res.records, res.failover, res.summary
    assert fo is not None
    t_end = math.ceil(float(rec.arrival[-1]) / 5) * 5
    adm = rec.admitted
    plain = adm & ~rec.moved & ~rec.requeued
    edges = np.arange(0.0, t_end + WINDOW_S, WINDOW_S)
    short = adm & (rec.klass == 0)
    p95 = windowed_percentile(rec.arrival[short], rec.ttft[short], edges)
    slo_short = res.config.slo_s[0]
    with lab_figure(5.6) as fig:
        top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [1.6, 1]})
        for ax in (top, bottom):
            ax.axvspan(fail_at, fail_at + DOWN_S, color=ROLE["rejected"], alpha=0.08, lw=0)
            ax.axvline(fail_at, color=ROLE["reference"], lw=1.2)
            ax.axvline(fail_at + DOWN_S, color=ROLE["reference"], lw=1.2, ls="--")
        y_top = ttft_top(float(rec.ttft[adm].max()) if adm.any() else math.nan)
        ttft = np.maximum(rec.ttft, Y_LIM[0])
        low = adm & (rec.ttft < Y_LIM[0])
        for k, name in enumerate(("short", "long")):
            m = plain & (rec.klass == k)
            top.scatter(rec.arrival[m], ttft[m], s=3 if k == 0 else 5, lw=0,
                        color=ROLE["neutral"] if k == 0 else CLASS_COLORS["long"],
                        alpha=0.5 if k == 0 else 0.7, label=f"{name} request")
        top.scatter(rec.arrival[rec.requeued], ttft[rec.requeued], s=14, color=ROLE["inflight"],
                    marker="s", lw=0, label=f"requeued off c{FAIL_CLUSTER} ({fo.requeued})")
        top.scatter(rec.arrival[rec.moved], ttft[rec.moved], s=22, color=ROLE["miss"], lw=0,
                    marker="D", label=f"moved session, cold ({fo.sessions_moved})")
        # NOTE: the top grows with the data; a TTFT under the floor is drawn on the bottom edge as
        # a triangle, counted in the legend (none with DEMO_SIM: TTFT >= one decode step).
        n_low = int(low.sum())
        if n_low:
            top.scatter(rec.arrival[low], ttft[low], s=26, marker="v", color=CLIP_COLOR,
                        edgecolor="black", lw=0.4, clip_on=False, zorder=6,
                        label=f"< {Y_LIM[0]:g} s, on the edge ({n_low})")
        mid = (edges[:-1] + edges[1:]) / 2
        top.step(mid, p95, where="mid", color=ROLE["reference"], lw=1.6,
                 label=f"short P95 per {WINDOW_S:g} s")
        top.axhline(slo_short, color=ROLE["hit"], ls=":", lw=1.2,
                    label=f"short SLO {slo_short:g} s")
        top.set_yscale("log")
        top.set_ylim(Y_LIM[0], y_top)
        ticks = [v for v in Y_TICKS if Y_LIM[0] <= v <= y_top]
        top.set_yticks(ticks, [f"{v:g}" if v < 1000 else f"{v / 1000:g}k" for v in ticks])
        top.minorticks_off()
        top.set_ylabel("TTFT (s, log)")
        top.set_title(f"{router}: c{FAIL_CLUSTER} fails at {fail_at} s, rejoins cold at "
                      f"{fail_at + DOWN_S:g} s; {recovery_words(fo.recovery_time_s)}")
        top.legend(loc="upper left", ncols=4 if n_low else 6, fontsize=7,
                   markerscale=1.2, handletextpad=0.2, columnspacing=0.7)
        top.text(fail_at, Y_LIM[0] * 1.1, f" c{FAIL_CLUSTER} fails", fontsize=7, va="bottom")
        top.text(fail_at + DOWN_S, Y_LIM[0] * 1.1, f" c{FAIL_CLUSTER} rejoins", fontsize=7,
                 va="bottom")

        load = res.load_series.T  # (clusters, bins)
        load_max = int(load.max())
        vmax = max(LOAD_MAX, load_max)  # data-driven: the darkest cell is the true maximum
        img = bottom.imshow(load, aspect="auto", cmap="Greys",
                            norm=PowerNorm(0.5, vmin=0, vmax=vmax),
                            origin="lower", interpolation="nearest",
                            extent=(float(res.load_times[0]), float(res.load_times[-1]),
                                    -0.5, load.shape[0] - 0.5))
        bottom.set_yticks(range(load.shape[0]), [f"c{k}" for k in range(load.shape[0])],
                          fontsize=7)
        for label, color in zip(bottom.get_yticklabels(), cluster_colors(load.shape[0]),
                                strict=True):
            label.set_color(color)
            label.set_fontweight("bold")
        bottom.grid(False)
        bottom.add_patch(Rectangle((fail_at, FAIL_CLUSTER - 0.5), DOWN_S, 1, fill=False,
                                   hatch="////", edgecolor=ROLE["rejected"], lw=0.8))
        bottom.set_xlim(0, t_end)
        bottom.set_xlabel("arrival time (s)")
        bottom.set_ylabel("cluster")
        bottom.set_title(f"Requests outstanding per cluster (queued + prefilling); "
                         f"c{FAIL_CLUSTER} hatched while down")
        bar = fig.colorbar(img, ax=bottom, pad=0.01, fraction=0.03, ticks=load_ticks(vmax))
        bar.ax.set_title("req." if load_max <= LOAD_MAX else f"req.\nmax {load_max}", fontsize=7,
                         fontweight="normal", loc="center")
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
    }
    return FigureResult(fig, metrics)
