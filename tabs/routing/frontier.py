"""Figure: the frontier, hit rate against the quality cost (delta NLL) for every setting at one
cache size: a curve per J as the window M sweeps, cache_prior's lam sweep, the stock point,
prefetch at zero cost, and the Belady ceiling of stock's requests, which routing can beat
because it changes the requests."""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.lines import Line2D
from matplotlib.ticker import NullLocator

from core.experiments.routing import curve, setting
from core.experiments.routing_grid import DIMS, WINDOWS
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE
from tabs.routing.common import ARM_COLOUR, FAMILY_STYLE

LINEAR = 0.05  # nats per byte: the x axis is linear inside +-LINEAR (where max_rank J=1 lives)
TICKS = (-0.05, -0.025, 0.0, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
# A projector: the key below the plot (in it, it covered the curves), fewer words, the
# Belady ceiling named beside the plot at its line's end (in it, it met the points' notes).
LOOK = Projector(legends="below")


@dataclass(frozen=True, kw_only=True)
class FrontierLayout:
    prefetch_at: tuple[int, int]  # the prefetch point's note: its offset, in points
    prefetch_va: str  # ... and its vertical alignment
    belady_x: float  # the Belady ceiling's name: x in axes fractions (past 1: beside the plot)
    belady_lift: float  # ... its height above the ceiling's line, in % hit rate
    belady_va: str  # ... and its vertical alignment


# A projector: the prefetch note above its point, clear of λ's notes; the Belady ceiling named
# beside the plot at its line's end (in the plot, it met the points' notes).
FRONTIER = Arrangement(
    normal=FrontierLayout(prefetch_at=(10, -4), prefetch_va="baseline", belady_x=0.01,
                          belady_lift=1.0, belady_va="bottom"),
    projector=FrontierLayout(prefetch_at=(-6, 8), prefetch_va="bottom", belady_x=1.01,
                             belady_lift=0.0, belady_va="center"))


@arranged_by(FRONTIER)
def routing_frontier(M: int, J: int, method: str, alpha: float, capacity: str, *,
                     lay: FrontierLayout) -> FigureResult:
    s = setting(M, J, method, alpha, capacity)
    sw = s.sweep
    stock, pilot = sw.stock, sw.prefetch["pilot"]
    curves = {"max_rank J=1": curve(sw, "max_rank", 1, s.alpha),
              "max_rank J=0": curve(sw, "max_rank", 0, s.alpha),
              "cache_prior": curve(sw, "cache_prior", 0, 1.0)}
    metrics: dict[str, float | int | str] = {
        "capacity": s.capacity, "alpha": s.alpha, "stock_hit": stock.hit_rate,
        "prefetch_hit": pilot.hit_rate, "prefetch_delta_nll": pilot.delta_nll,
        "belady_ceiling": sw.belady_rate, "setting": s.route.label()}
    xs: list[float] = []
    with lab_figure(5.4, look=LOOK) as fig:
        ax = fig.subplots()
        ax.axhline(100 * sw.belady_rate, color=ROLE["reference"], ls=":", lw=1.4)
        ax.axvline(0, color=ROLE["grid"], lw=1.2, zorder=0)
        for name, pts in curves.items():
            method = "cache_prior" if name == "cache_prior" else "max_rank"
            x = [p.record.delta_nll for p in pts]
            y = [100 * p.record.hit_rate for p in pts]
            xs += x
            sweep_words = (f", α = {s.alpha:g}: M = {WINDOWS[0]}..{WINDOWS[-1]}"
                           if method == "max_rank" else ": λ = 0..1")
            ax.plot(x, y, ms=6, lw=1.6, **FAMILY_STYLE[name], label=name + sweep_words)
            for p in pts:
                tag = f"M={p.M}" if method == "max_rank" else f"λ={p.lam:.2f}"
                key = (f"{name.replace(' ', '_').replace('=', '')}_"
                       + (f"M{p.M}" if method == "max_rank" else f"lam{p.lam:.2f}"))
                metrics[f"{key}_hit"] = p.record.hit_rate
                metrics[f"{key}_dnll"] = p.record.delta_nll
                if p.M in (WINDOWS[1], WINDOWS[-1]):
                    ax.annotate(tag, (p.record.delta_nll, 100 * p.record.hit_rate),
                                xytext=(7, -11 if method == "max_rank" else 4),
                                textcoords="offset points", fontsize=8.5,
                                color=FAMILY_STYLE[name]["color"])
        ax.plot([0], [100 * stock.hit_rate], "*", ms=16, color=ARM_COLOUR["stock"], zorder=5)
        ax.annotate(f"stock {100 * stock.hit_rate:.0f}%", (0, 100 * stock.hit_rate),
                    xytext=(10, -4), textcoords="offset points", fontsize=9.5,
                    fontweight="bold")
        ax.plot([pilot.delta_nll], [100 * pilot.hit_rate], "P", ms=13,
                color=ARM_COLOUR["prefetch"], zorder=5)
        ax.annotate(brief(ax, f"next-layer prefetch {100 * pilot.hit_rate:.0f}%: no quality cost",
                          f"prefetch {100 * pilot.hit_rate:.0f}%"),
                    (pilot.delta_nll, 100 * pilot.hit_rate), xytext=lay.prefetch_at,
                    va=lay.prefetch_va, textcoords="offset points", fontsize=9.5,
                    fontweight="bold")
        arms = s.arms
        if not s.route.stock:
            r, b = arms["routing"], arms["both"]
            ax.errorbar([r.delta_nll], [100 * r.hit_rate], xerr=[r.nll_se], fmt="o", ms=17,
                        mfc="none", mec=ROLE["reference"], mew=1.8, ecolor=ROLE["reference"],
                        elinewidth=1.2, capsize=4, zorder=6)
            ax.plot([b.delta_nll], [100 * b.hit_rate], "o", ms=10, color=ARM_COLOUR["both"],
                    zorder=6)
            ax.annotate("", xy=(b.delta_nll, 100 * b.hit_rate),
                        xytext=(r.delta_nll, 100 * r.hit_rate),
                        arrowprops={"arrowstyle": "-|>", "color": ARM_COLOUR["both"]})
            xs += [b.delta_nll]
            metrics |= {"current_hit": r.hit_rate, "current_delta_nll": r.delta_nll,
                        "current_delta_nll_se": r.nll_se,
                        "current_both_hit": b.hit_rate, "current_both_delta_nll": b.delta_nll}
        hi, lo = max(xs + [LINEAR]), min(xs + [0.0])
        left = -LINEAR if lo < -LINEAR / 10 else -LINEAR / 10
        ax.set_xscale("symlog", linthresh=LINEAR, linscale=2.0)
        ax.set_xlim(left, hi * 1.6)
        ticks = [t for t in TICKS if left <= t <= hi * 1.6]
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.xaxis.set_minor_locator(NullLocator())
        belady = f"{100 * sw.belady_rate:.0f}%"
        ax.text(lay.belady_x, 100 * sw.belady_rate + lay.belady_lift,
                brief(ax, f"Belady ceiling, stock's requests (open-loop replay), {belady}\n"
                      "(routing can beat it: it changes the requests)",
                      f"Belady\n{belady}"), ha="left", va=lay.belady_va,
                fontsize=9, transform=ax.get_yaxis_transform())
        ys = [100 * p.record.hit_rate for pts in curves.values() for p in pts]
        ax.set_ylim(max(0, 10 * (min(ys) // 10) - 10), 104)
        ax.set_xlabel(brief(ax, f"quality cost: Δ NLL vs stock, nats per byte over "
                            f"{stock.positions} held-out bytes (linear within ±{LINEAR:g}, log "
                            f"beyond; bar: ± one standard error)",
                            f"Δ NLL vs stock, nats per byte (linear within ±{LINEAR:g})"))
        ax.set_ylabel("hit rate (% of expert gets)")
        every = f"Hit rate vs quality at {s.capacity} slots: every setting"
        ax.set_title(brief(ax, f"{every}, closed loop ({DIMS.top_k} of {DIMS.n_experts} experts "
                           "per layer)", every))
        handles, labels = ax.get_legend_handles_labels()
        handles.append(Line2D([], [], marker="o", ls="", ms=10, mfc="none",
                              mec=ROLE["reference"], mew=1.8))
        labels.append("your setting → + prefetch (blue)")
        ax.legend(handles, labels, loc="lower right", fontsize=8.5, frameon=True,
                  framealpha=0.9)
    return FigureResult(fig, metrics)
