"""Figure: hit rate vs capacity for LRU, LFU and Belady, with the ceiling and the top-k floor."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.experiments.cache_policies import check_geometry, curves
from core.experts.policies import POLICIES
from tabs.cache_policies.common import POLICY_STYLE, SHORT_LABEL, plot_policies
from tabs.figure import (
    Arrangement,
    FigureResult,
    Projector,
    arranged_by,
    brief,
    lab_figure,
    shorten,
)
from tabs.palette import ROLE

UNIFORM = "LRU with uniform i.i.d. routing (no locality): ≈ C / E"
# presenting: short labels (the legend inside the plot), one-line title
LOOK = Projector(words={**{POLICY_STYLE[p]["label"]: SHORT_LABEL[p] for p in POLICIES},
                        UNIFORM: "LRU, uniform routing: ≈ C / E",
                        "hit rate (% of gets)": "hit rate (%)"})


@dataclass(frozen=True, kw_only=True)
class CurveLayout:
    floor_note: dict[str, str]  # how the top-k floor's note, read up, is anchored at its x


# presenting: texts wrap, which anchors a rotated text at its ha end, so the floor's note starts
# at its left (bottom) end and reads up, the room matplotlib's wrap measures
CURVE = Arrangement(normal=CurveLayout(floor_note={"ha": "right", "rotation_mode": "default"}),
                    projector=CurveLayout(floor_note={"ha": "left", "rotation_mode": "anchor"}))


@arranged_by(CURVE)
def policy_hit_rate_curve(skew: float, persistence: float, topk: int, n_experts: int,
                          tokens: int, seed: int, *, lay: CurveLayout) -> FigureResult:
    check_geometry(topk, n_experts)
    caps, rates, ceiling = curves(tokens, n_experts, topk, skew, persistence, seed)
    floor = topk + 1
    with lab_figure(4.4, look=LOOK) as fig:
        ax = fig.subplots()
        ax.axvspan(0, floor, color=ROLE["empty"], lw=0, zorder=0)
        ax.axvline(floor, color=ROLE["annotation"], lw=1.0)
        shorten(ax.text(floor - 0.3, 3, f"top-k floor: C ≥ top-k + 1 = {floor} (smaller "
                        "caches fail init)", va="bottom", rotation=90, fontsize=7.5,
                        color=ROLE["annotation"], **lay.floor_note),
                f"C ≥ top-k + 1 = {floor}")
        e = np.linspace(0, n_experts, 50)
        ax.plot(e, np.minimum(100 * e / n_experts, 100 * ceiling), color=ROLE["neutral"],
                lw=1.0, ls=(0, (1, 2)), label=UNIFORM)
        ax.axhline(100 * ceiling, color=ROLE["neutral"], lw=1.2, ls="--",
                   label=brief(ax, f"compulsory-miss ceiling without prefetch: 1 − distinct / "
                               f"gets = {100 * ceiling:.1f}%",
                               f"ceiling {100 * ceiling:.1f}% (1 − distinct / gets)"))
        plot_policies(ax, caps, rates, n_experts)
        # presenting: tokens, top-k and seed are on the controls
        ax.set_xlabel(brief(ax, f"cache capacity C (experts resident, of E = {n_experts})",
                            f"cache capacity C (of E = {n_experts} experts)"))
        ax.set_title(brief(ax, f"Hit rate vs capacity: {tokens} tokens × top-{topk}, skew "
                           f"{skew:.2f}, persistence {persistence:.2f}, seed {seed}",
                           f"Hit rate vs capacity: skew {skew:.2f}, persistence "
                           f"{persistence:.2f}"))
        ax.legend(loc="lower right")
    quarter = int(np.argmin(np.abs(caps - n_experts / 4)))
    metrics: dict[str, int | float | str | bool] = {
        "gets": tokens * topk, "ceiling": ceiling, "floor_capacity": floor,
        "quarter_capacity": int(caps[quarter]),
    }
    for p in POLICIES:
        metrics[f"{p}_at_floor"] = float(rates[p][0])
        metrics[f"{p}_at_quarter"] = float(rates[p][quarter])
    metrics["belady_minus_lru_max"] = float(np.max(rates["belady"] - rates["lru"]))
    metrics["belady_bounds_all"] = bool(np.all(rates["belady"] >= np.maximum(rates["lru"],
                                                                             rates["lfu"])))
    return FigureResult(fig, metrics)
