"""Figure: raw vs upstream aggregate vs exact hit rates, per window and per scenario.

Upstream's "TRUE resident" subtracts prefetch_reads from hits in the window. That is right only
if every prefetch is consumed exactly once, in the same window, before eviction; the exact
counters classify each hit when it happens instead.
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Patch

from core.experts.scenarios import SCENARIOS, RunTotals, run_totals, window_rates
from tabs.expert_cache.common import scenario_run, tint
from tabs.figure import FigureResult, lab_figure
from tabs.palette import ROLE

GRID = {"width_ratios": [2.2, 1], "left": 0.06, "right": 0.98, "top": 0.76, "bottom": 0.12,
        "wspace": 0.5}
AGG = {"color": "white", "edgecolor": ROLE["reference"], "hatch": "....", "linewidth": 0.8}
WRONG = tint("miss", 0.85)  # faint band behind a window whose aggregate is wrong


def cache_hit_rates(slots: int, scenario: str, topk: int, schedule: int, seed: int) -> FigureResult:
    run = scenario_run(slots, scenario, topk, schedule, seed)
    ws = run.windows
    x = np.arange(len(ws))
    raw, agg, res, pre = np.array([window_rates(w) for w in ws]).reshape(-1, 4).T  # (4, W)
    totals = {name: run_totals(scenario_run(slots, name, topk, schedule, seed))
              for name in SCENARIOS}
    with lab_figure(4.3) as fig:
        fig.set_layout_engine("none")  # fixed margins: constrained layout is slow here
        left, right = fig.subplots(1, 2, gridspec_kw=GRID)
        w = 0.27
        for i, win in enumerate(ws):
            if win.aggregate_wrong:
                left.axvspan(i - 0.48, i + 0.48, color=WRONG, lw=0, zorder=0)
                label = f"{win.aggregate_error:+d}".replace("-", "−")
                if win.stats.aggregate_clamped:
                    label += "\n(<0)"
                left.text(i, 103, label, ha="center", va="bottom", fontsize=7,
                          fontweight="bold", color=ROLE["miss"], linespacing=0.9)
            elif not win.requests:
                left.text(i, 3, "no gets", ha="center", va="bottom", fontsize=7, rotation=90,
                          color=ROLE["annotation"])
        left.bar(x - w, raw, w, color=ROLE["neutral"], label="raw: hits / requests")
        left.bar(x, agg, w, label="naive aggregate: max(hits − prefetch_reads, 0) / requests",
                 **AGG)
        left.bar(x + w, res, w, color=ROLE["hit"], label="exact: resident hits / gets")
        left.bar(x + w, pre, w, bottom=res, color=tint("prefetch", 0.3),
                 label="exact: prefetched hits / gets (stacked: resident + prefetched = raw)")
        left.set_xticks(x, [f"w{i}" for i in x], fontsize=7 if len(ws) > 16 else 8)
        left.set_xlim(-0.6, len(ws) - 0.4)
        left.set_ylim(0, 115)
        left.set_yticks(range(0, 101, 25))
        left.set_ylabel("hit rate in the window (%)")
        left.set_xlabel("counter window (reset_stats between windows)")
        left.set_title(f"Per window: {scenario}", fontsize=9)
        handles, _ = left.get_legend_handles_labels()
        handles.append(Patch(fc=WRONG, label="±n: the aggregate is off by n resident hits "
                             "((<0): negative, hidden by the clamp)"))
        left.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.09), ncol=2,
                    fontsize=7.5, borderaxespad=0.0, columnspacing=1.2)
        _summary(right, totals, scenario)
    sel = totals[scenario]
    metrics: dict[str, int | float | str | bool] = {
        "scenario": scenario, "windows": len(ws), "windows_with_gets": sel.windows_with_gets,
        "windows_aggregate_wrong": sel.wrong_windows, "raw_pct": sel.rates.raw,
        "aggregate_pct": sel.rates.aggregate, "exact_resident_pct": sel.rates.exact_resident,
        "exact_prefetched_pct": sel.rates.exact_prefetched,
    }
    for name, t in totals.items():
        key = name.replace(" ", "_")
        metrics |= {f"{key}_raw_pct": t.rates.raw, f"{key}_aggregate_pct": t.rates.aggregate,
                    f"{key}_exact_resident_pct": t.rates.exact_resident,
                    f"{key}_wrong_windows": t.wrong_windows}
    return FigureResult(fig, metrics)


def _summary(ax, totals: dict[str, RunTotals], scenario: str) -> None:
    names = list(totals)
    y = np.arange(len(names))[::-1].astype(float)
    h = 0.26
    raw, agg, res, pre = np.array([totals[n].rates for n in names]).T  # (4, scenarios)
    ax.barh(y + h, raw, h, color=ROLE["neutral"])
    ax.barh(y, agg, h, **AGG)
    ax.barh(y - h, res, h, color=ROLE["hit"])
    ax.barh(y - h, pre, h, left=res, color=tint("prefetch", 0.3))
    labels = [f"{n}\naggregate wrong in {totals[n].wrong_windows}/{totals[n].windows_with_gets}"
              for n in names]
    ax.set_yticks(y, labels, fontsize=7.5)
    for lab, n in zip(ax.get_yticklabels(), names, strict=True):
        lab.set_color(ROLE["miss"] if totals[n].wrong_windows else ROLE["annotation"])
        if n == scenario:
            lab.set_fontweight("bold")
    ax.set_xlim(0, 100)
    ax.set_xticks(range(0, 101, 25))
    ax.set_ylim(-0.6, len(names) - 0.4)
    ax.set_xlabel("hit rate over the whole run (%)")
    ax.set_title("All five scenarios, same knobs", fontsize=9)
