"""Figure: hit rate vs capacity for LRU, LFU and Belady, with the ceiling and the top-k floor."""

from __future__ import annotations

import numpy as np

from core.experiments.cache_policies import check_geometry, curves
from core.experts.policies import POLICIES
from tabs.cache_policies.common import plot_policies
from tabs.figure import FigureResult, is_presenting, lab_figure
from tabs.palette import ROLE


def policy_hit_rate_curve(skew: float, persistence: float, topk: int, n_experts: int,
                          tokens: int, seed: int) -> FigureResult:
    check_geometry(topk, n_experts)
    caps, rates, ceiling = curves(tokens, n_experts, topk, skew, persistence, seed)
    floor = topk + 1
    present = is_presenting()  # short labels: the legend inside the plot, one-line title
    with lab_figure(4.4) as fig:
        ax = fig.subplots()
        ax.axvspan(0, floor, color=ROLE["empty"], lw=0, zorder=0)
        ax.axvline(floor, color=ROLE["annotation"], lw=1.0)
        floor_note = f"C ≥ top-k + 1 = {floor}" if present else \
            f"top-k floor: C ≥ top-k + 1 = {floor} (smaller caches fail init)"
        # presenting: texts wrap, which anchors a rotated text at its ha end, so the note
        # starts at its left (bottom) end and reads up, the room matplotlib's wrap measures
        ax.text(floor - 0.3, 3, floor_note, ha="left" if present else "right", va="bottom",
                rotation=90, rotation_mode="anchor" if present else "default", fontsize=7.5,
                color=ROLE["annotation"])
        e = np.linspace(0, n_experts, 50)
        ax.plot(e, np.minimum(100 * e / n_experts, 100 * ceiling), color=ROLE["neutral"],
                lw=1.0, ls=(0, (1, 2)),
                label="LRU, uniform routing: ≈ C / E" if present else
                "LRU with uniform i.i.d. routing (no locality): ≈ C / E")
        ax.axhline(100 * ceiling, color=ROLE["neutral"], lw=1.2, ls="--",
                   label=f"ceiling {100 * ceiling:.1f}% (1 − distinct / gets)" if present else
                   f"compulsory-miss ceiling without prefetch: 1 − distinct / gets = "
                   f"{100 * ceiling:.1f}%")
        plot_policies(ax, caps, rates, n_experts, short=present)
        if present:  # tokens, top-k and seed are on the controls
            ax.set_ylabel("hit rate (%)")
            ax.set_xlabel(f"cache capacity C (of E = {n_experts} experts)")
            ax.set_title(f"Hit rate vs capacity: skew {skew:.2f}, persistence {persistence:.2f}")
        else:
            ax.set_xlabel(f"cache capacity C (experts resident, of E = {n_experts})")
            ax.set_title(f"Hit rate vs capacity: {tokens} tokens × top-{topk}, skew {skew:.2f}, "
                         f"persistence {persistence:.2f}, seed {seed}")
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
