"""Figures (the key insight): the four arms side by side at one cache size. routing_arms:
routing buys hit rate and costs quality; prefetch buys hit rate at no cost in quality.
routing_io: prefetch pays in bytes read; the I/O time is modelled from bytes and reads only
(an assumed disk), never measured."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from core.experiments.routing import setting
from core.routing.disk import disk as disk_preset
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE
from tabs.routing.common import ARM_NAMES
from tabs.units import MIB

FRACTION_WORDS = {8: "an eighth-size", 4: "a quarter-size", 2: "a half-size"}
# routing_io on a projector: the bytes' key below both panels (over the bars it covers them).
IO_LOOK = Projector(legends="below")


@dataclass(frozen=True, kw_only=True)
class ArmsLayout:
    hit_top: float  # the hit-rate axis's top, in %: headroom for the legend above 100
    legend_cols: int  # the hit-rate legend's columns
    zero_style: dict  # the quality panel's "0 exactly" label


BOLD = {"fontsize": 10, "fontweight": "bold"}
# a projector: a two-row legend needs more headroom, and "0 exactly" in bold would run into the
# next bar
ARMS = Arrangement(
    normal=ArmsLayout(hit_top=128, legend_cols=3, zero_style=BOLD),
    projector=ArmsLayout(hit_top=145, legend_cols=2,
                         zero_style={"fontsize": 8, "fontweight": "normal"}))


def _bars(ax, title: str, ylabel: str) -> np.ndarray:
    x = np.arange(len(ARM_NAMES))
    ax.set_xticks(x, ARM_NAMES)
    ax.set_xlim(-0.6, len(ARM_NAMES) - 0.4)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.grid(axis="x", visible=False)
    return x


def _hits(ax, arms, belady: float, lay: ArmsLayout) -> None:
    x = _bars(ax, brief(ax, "Hit rate (gets served from memory)", "Hit rate"),
              "% of expert gets")
    for i, a in enumerate(ARM_NAMES):
        r = arms[a]
        res, pre = 100 * r.hit_resident / r.requests, 100 * r.hit_prefetched / r.requests
        ax.bar(x[i], res, 0.6, color=ROLE["hit"])
        ax.bar(x[i], pre, 0.6, bottom=res, color=ROLE["prefetch"])
        ax.text(x[i], res + pre + 2, f"{res + pre:.0f}%", ha="center", va="bottom", fontsize=10,
                fontweight="bold")
    ax.axhline(100 * belady, color=ROLE["reference"], ls=":", lw=1.4)
    ax.set_ylim(0, lay.hit_top)
    ax.set_yticks(range(0, 101, 20))
    belady_label = brief(ax, f"Belady, open-loop replay ({100 * belady:.0f}%)",
                         f"Belady ({100 * belady:.0f}%)")
    ax.legend(handles=[Patch(color=ROLE["hit"], label=brief(ax, "already resident", "resident")),
                       Patch(color=ROLE["prefetch"], label="loaded ahead"),
                       Line2D([], [], color=ROLE["reference"], ls=":", lw=1.4,
                              label=belady_label)],
              loc="upper center", ncols=lay.legend_cols, fontsize=8, handlelength=1.5,
              columnspacing=0.8)


def _quality(ax, arms, lay: ArmsLayout) -> None:
    x = _bars(ax, brief(ax, "Quality cost: Δ NLL vs stock (± one standard error)",
                        "Δ NLL vs stock (± 1 SE)"), "nats per byte")
    vals = [arms[a].delta_nll for a in ARM_NAMES]
    lim = max(0.05, 1.4 * max(abs(arms[a].delta_nll) + arms[a].nll_se for a in ARM_NAMES))
    for i, v in enumerate(vals):
        colour = ROLE["miss"] if v > 0 else ROLE["hit"]
        se = arms[ARM_NAMES[i]].nll_se
        ax.bar(x[i], v, 0.6, color=colour if v else ROLE["neutral"])
        if se:
            ax.errorbar([x[i]], [v], yerr=[se], color=ROLE["reference"], capsize=4, lw=1.2)
        word = "0 exactly" if v == 0 else f"{v:+.3f}"
        up = v >= 0
        style = lay.zero_style if v == 0 else BOLD
        ax.text(x[i], v + (se + 0.04 * lim if up else -se - 0.04 * lim), word, ha="center",
                va="bottom" if up else "top", **style)
    ax.axhline(0, color=ROLE["reference"], lw=0.8)
    ax.set_ylim(min(-0.25 * lim, 1.3 * min(vals)), lim)


def _bytes(ax, arms) -> None:
    x = _bars(ax, "Bytes read from disk per token", "MiB per token")
    top = 0.0
    for i, a in enumerate(ARM_NAMES):
        r = arms[a]
        dem, pre = r.demand_bytes / r.positions / MIB, r.prefetch_bytes / r.positions / MIB
        waste = r.wasted_bytes / r.positions / MIB
        ax.bar(x[i], dem, 0.6, color=ROLE["miss"])
        ax.bar(x[i], pre - waste, 0.6, bottom=dem, color=ROLE["prefetch"])
        ax.bar(x[i], waste, 0.6, bottom=dem + pre - waste, color="white",
               edgecolor=ROLE["waste"], hatch="///", lw=0.8)
        ax.text(x[i], dem + pre, f"{dem + pre:.2f}", ha="center", va="bottom", fontsize=10,
                fontweight="bold")
        top = max(top, dem + pre)
    ax.set_ylim(0, top * 1.3)
    ax.legend(handles=[Patch(color=ROLE["miss"], label="demand reads (misses)"),
                       Patch(color=ROLE["prefetch"], label="prefetch, used"),
                       Patch(facecolor="white", edgecolor=ROLE["waste"], hatch="///",
                             label="prefetch, evicted unused")],
              loc="upper left", fontsize=8)


def _io(ax, arms, preset: str) -> dict[str, float]:
    dk = disk_preset(preset)
    x = _bars(ax, f"Modelled disk time per token ({preset})", "ms per token (modelled)")
    out = {}
    top = 0.0
    for i, a in enumerate(ARM_NAMES):
        r = arms[a]
        dem = 1e3 * dk.seconds(r.demand_reads, r.demand_bytes) / r.positions
        pre = 1e3 * dk.seconds(r.prefetch_reads, r.prefetch_bytes) / r.positions
        ax.bar(x[i], dem, 0.6, color=ROLE["miss"])
        ax.bar(x[i], pre, 0.6, bottom=dem, color=ROLE["prefetch"], alpha=0.5)
        total = f"{dem + pre:.0f}" if dem + pre >= 10 else f"{dem + pre:.2g}"
        ax.text(x[i], dem + pre, brief(ax, f"{dem:.2g} + {pre:.2g}", total) if pre
                else f"{dem:.2g}", ha="center", va="bottom", fontsize=9)  # a projector: the sum
        out[a] = dem
        out[f"{a}_prefetch"] = pre
        top = max(top, dem + pre)
    ax.set_ylim(0, 1.3 * top)
    disk = f"{preset}: {dk.bandwidth / 1e9:g} GB/s, {dk.per_read * 1e6:g} µs a read"
    ax.set_xlabel(brief(ax, f"assumed {disk}\ndark: demand (the token waits) · pale: prefetch "
                        "(can hide behind compute)", f"{disk}\ndark: demand · pale: prefetch"),
                  fontsize=8)
    return out


def _title(fig, s, sw, arms) -> str:
    frac = sw.n_experts_total // s.capacity
    title = (f"{FRACTION_WORDS.get(frac, 'A')} cache ({s.capacity} of {sw.n_experts_total} "
             f"experts), {s.words()}; both = routing + next-layer prefetch; "
             f"{arms['stock'].positions} held-out bytes")
    # a projector: what the arms are, and the trace, are in the lesson
    return brief(fig, title[0].upper() + title[1:],
                 f"{s.capacity} of {sw.n_experts_total} experts cached; {s.words()}")


@arranged_by(ARMS)
def routing_arms(M: int, J: int, method: str, alpha: float, capacity: str, *,
                 lay: ArmsLayout) -> FigureResult:
    """What the levers buy (hit rate) and what routing costs (quality)."""
    s = setting(M, J, method, alpha, capacity)
    arms, sw = s.arms, s.sweep
    with lab_figure(3.9) as fig:
        hit, nll = fig.subplots(1, 2, sharex=True)
        _hits(hit, arms, sw.belady_rate, lay)
        _quality(nll, arms, lay)
        fig.suptitle(_title(fig, s, sw, arms), fontsize=10.5, x=0.01,
                     ha="left")
    metrics: dict[str, float | int | str] = {"capacity": s.capacity, "setting": s.route.label(),
                                             "belady_ceiling": sw.belady_rate,
                                             "positions": arms["stock"].positions}
    for a in ARM_NAMES:
        r = arms[a]
        metrics |= {f"{a}_hit_rate": r.hit_rate, f"{a}_prefetched": r.hit_prefetched / r.requests,
                    f"{a}_delta_nll": r.delta_nll, f"{a}_delta_nll_se": r.nll_se,
                    f"{a}_swap_rate": r.swap_rate}
    return FigureResult(fig, metrics)


def routing_io(M: int, J: int, method: str, alpha: float, capacity: str,
               disk: str) -> FigureResult:
    """What the arms read: bytes per token, and the disk time those reads would take."""
    s = setting(M, J, method, alpha, capacity)
    arms, sw = s.arms, s.sweep
    with lab_figure(3.9, look=IO_LOOK) as fig:
        mb, io = fig.subplots(1, 2, sharex=True)
        _bytes(mb, arms)
        ms = _io(io, arms, disk)
        fig.suptitle(_title(fig, s, sw, arms), fontsize=10.5, x=0.01,
                     ha="left")
    metrics: dict[str, float | int | str] = {"capacity": s.capacity, "setting": s.route.label(),
                                             "disk": disk, "positions": arms["stock"].positions}
    for a in ARM_NAMES:
        r = arms[a]
        metrics |= {f"{a}_mib_per_token": (r.demand_bytes + r.prefetch_bytes) / r.positions / MIB,
                    f"{a}_wasted_mib_per_token": r.wasted_bytes / r.positions / MIB,
                    f"{a}_demand_io_ms_per_token": ms[a],
                    f"{a}_prefetch_io_ms_per_token": ms[f"{a}_prefetch"]}
    return FigureResult(fig, metrics)
