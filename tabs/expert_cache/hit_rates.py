"""Figures: the naive "reuse = hits − prefetch reads" against the exact counters, per window of
one scenario (cache_hit_rates), and over the whole run of every scenario (cache_scenarios).

The naive aggregate is right only if every prefetch is consumed exactly once, in the same
window, before eviction; the exact counters classify each hit when it happens instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.patches import Patch

from core.experiments.expert_cache import scenario_run
from core.experts.scenarios import SCENARIOS, run_totals, window_rates
from tabs.expert_cache.common import FS, legible, tint
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE

AGG = {"color": "white", "edgecolor": ROLE["reference"], "hatch": "....", "linewidth": 0.8}
PREFETCHED = tint("prefetch", 0.3)
WRONG = tint("miss", 0.85)  # faint band behind a window whose aggregate is wrong


@dataclass(frozen=True, kw_only=True)
class HitRatesLayout:
    no_gets: dict  # the rotated "no gets" note's anchor, over a window with no gets
    rates_top: float  # the hit-rate axis's top, in %: room for the "±n" labels above 100
    rates_title_pad: float | None  # the hit rates' title over the "±n"; None: matplotlib's pad
    scenarios_title: dict  # the scenarios' title's pad and x: over the tick labels and legend


# a projector: texts wrap, which anchors a rotated text at its ha end, so "no gets" starts at
# its bottom end and reads up; room for "−n\n(<0)" above 100; the legends gathered below, so
# the scenarios' title stays over its axes (normal: over the tick labels, above the legend)
HIT_RATES = Arrangement(
    normal=HitRatesLayout(no_gets={"ha": "center", "va": "bottom", "rotation_mode": "default"},
                          rates_top=118, rates_title_pad=8,
                          scenarios_title={"pad": 28, "x": -0.42}),
    projector=HitRatesLayout(no_gets={"ha": "left", "va": "center", "rotation_mode": "anchor"},
                             rates_top=130, rates_title_pad=None, scenarios_title={}))


@arranged_by(HIT_RATES)
def cache_hit_rates(slots: int, scenario: str, topk: int, schedule: int, seed: int, *,
                    lay: HitRatesLayout) -> FigureResult:
    run = scenario_run(slots, scenario, topk, schedule, seed)
    ws = run.windows
    x = np.arange(len(ws))
    _, agg, res, pre = np.array([window_rates(w) for w in ws]).reshape(-1, 4).T  # (4, W)
    total = run_totals(run)
    w = 0.38
    clamped = any(v.stats.aggregate_clamped for v in ws)
    labels = ("naive reuse: max(hits − prefetch reads, 0) / gets",
              "exact reuse: resident hits / gets",
              "exact: first use of a prefetch / gets (bar top = all hits)",
              "±n: naive reuse off by n hits"
              + (" ((<0): negative, clamped to 0)" if clamped else ""))
    short = ("naive: hits − prefetch reads", "exact: resident hits",
             "exact: first use of a prefetch",
             "±n: naive off by n hits" + (" ((<0): clamped)" if clamped else ""))
    # a projector: short labels, the legend below
    look = Projector(words={**dict(zip(labels, short, strict=True)),
                            "% of the window's gets": "% of gets",
                            "counter window (the counters reset between windows)":
                            "counter window"}, legends="below")
    # normal mode: fixed margins (the grid's): constrained layout is slow here
    with lab_figure(4.3, look=look, fixed=True) as fig:
        ax = fig.subplots(gridspec_kw={"left": 0.075, "right": 0.985, "top": 0.915,
                                       "bottom": 0.265})
        for i, win in enumerate(ws):
            if win.aggregate_wrong:
                ax.axvspan(i - 0.48, i + 0.48, color=WRONG, lw=0, zorder=0)
                label = f"{win.aggregate_error:+d}".replace("-", "−")
                if win.stats.aggregate_clamped:
                    label += "\n(<0)"
                ax.text(i, 102, label, ha="center", va="bottom", fontsize=FS, fontweight="bold",
                        color=ROLE["miss"], linespacing=0.9)
            elif not win.requests:
                ax.text(i, 3, "no gets", fontsize=FS, rotation=90, color=ROLE["annotation"],
                        **lay.no_gets)
        ax.bar(x - w / 2, agg, w, label=labels[0], **AGG)
        ax.bar(x + w / 2, res, w, color=ROLE["hit"], label=labels[1])
        ax.bar(x + w / 2, pre, w, bottom=res, color=PREFETCHED, label=labels[2])
        ax.set_xticks(x, [f"w{i}" for i in x])
        ax.set_xlim(-0.6, len(ws) - 0.4)
        ax.set_ylim(0, lay.rates_top)
        ax.set_yticks(range(0, 101, 25))
        ax.set_ylabel("% of the window's gets")
        ax.set_xlabel("counter window (the counters reset between windows)")
        handles, _ = ax.get_legend_handles_labels()
        handles.append(Patch(fc=WRONG, label=labels[3]))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(-0.06, -0.185),
                  ncol=2, fontsize=FS, borderaxespad=0.0, columnspacing=1.2)
        ax.set_title(brief(ax, f"{scenario}: naive reuse is wrong in {total.wrong_windows} of "
                           f"{total.windows_with_gets} windows; whole run "
                           f"{total.rates.aggregate:.0f}% naive vs "
                           f"{total.rates.exact_resident:.0f}% exact",
                           f"{scenario}: naive wrong in {total.wrong_windows} of "
                           f"{total.windows_with_gets} windows; {total.rates.aggregate:.0f}% "
                           f"naive vs {total.rates.exact_resident:.0f}% exact"),
                     loc="left", fontsize=11, pad=lay.rates_title_pad)
        legible(ax)
    metrics: dict[str, int | float | str | bool] = {
        "scenario": scenario, "windows": len(ws), "windows_with_gets": total.windows_with_gets,
        "windows_aggregate_wrong": total.wrong_windows, "raw_pct": total.rates.raw,
        "aggregate_pct": total.rates.aggregate, "exact_resident_pct": total.rates.exact_resident,
        "exact_prefetched_pct": total.rates.exact_prefetched,
        "max_window_error": max((abs(v.aggregate_error) for v in ws if v.requests), default=0),
    }
    return FigureResult(fig, metrics)


@arranged_by(HIT_RATES)
def cache_scenarios(slots: int, scenario: str, topk: int, schedule: int, seed: int, *,
                    lay: HitRatesLayout) -> FigureResult:
    totals = {name: run_totals(scenario_run(slots, name, topk, schedule, seed))
              for name in SCENARIOS}
    names = list(totals)
    y = np.arange(len(names))[::-1].astype(float)
    h = 0.36
    _, agg, res, pre = np.array([totals[n].rates for n in names]).T  # (4, scenarios)
    keys = ("naive reuse (hits − prefetch reads)", "exact reuse (resident hits)",
            "exact: first use of a prefetch")
    labels = [f"{n}\nnaive wrong in {totals[n].wrong_windows}/{totals[n].windows_with_gets} "
              "windows" for n in names]
    # a projector: one-line labels, the legend below
    words = {**dict(zip(keys, ("naive: hits − prefetch reads", "exact: resident hits",
                               "exact: prefetch used"), strict=True)),
             **{lab: f"{n}: {totals[n].wrong_windows}/{totals[n].windows_with_gets} wrong"
                for lab, n in zip(labels, names, strict=True)}}
    # normal mode: fixed margins (the grid's)
    with lab_figure(4.0, look=Projector(words=words, legends="below"), fixed=True) as fig:
        ax = fig.subplots(gridspec_kw={"left": 0.3, "right": 0.97, "top": 0.78, "bottom": 0.14})
        ax.barh(y + h / 2, agg, h, **AGG, label=keys[0])
        ax.barh(y - h / 2, res, h, color=ROLE["hit"], label=keys[1])
        ax.barh(y - h / 2, pre, h, left=res, color=PREFETCHED, label=keys[2])
        ax.set_yticks(y, labels)
        for lab, n in zip(ax.get_yticklabels(), names, strict=True):
            lab.set_color(ROLE["miss"] if totals[n].wrong_windows else ROLE["annotation"])
            if n == scenario:
                lab.set_fontweight("bold")
        ax.set_xlim(0, 100)
        ax.set_xticks(range(0, 101, 25))
        ax.set_ylim(-0.6, len(names) - 0.4)
        ax.set_xlabel("% of the run's gets")
        # normal mode: the title over the tick labels, the legend between them and the axes
        ax.set_title(brief(ax, f"Every scenario ({slots} slots, top-{topk}): naive = exact only "
                           "when each prefetch is used once, in its window",
                           f"{slots} slots, top-{topk}: naive = exact only if each prefetch is "
                           "used once, in its window"), loc="left", fontsize=10,
                     **lay.scenarios_title)
        ax.legend(loc="lower left", bbox_to_anchor=(-0.42, 1.0), ncol=3, fontsize=FS,
                  borderaxespad=0.2, columnspacing=1.2)
        legible(ax)
    metrics: dict[str, int | float | str | bool] = {"scenario": scenario}
    for name, t in totals.items():
        key = name.replace(" ", "_")
        metrics |= {f"{key}_raw_pct": t.rates.raw, f"{key}_aggregate_pct": t.rates.aggregate,
                    f"{key}_exact_resident_pct": t.rates.exact_resident,
                    f"{key}_wrong_windows": t.wrong_windows,
                    f"{key}_windows_with_gets": t.windows_with_gets}
    return FigureResult(fig, metrics)
