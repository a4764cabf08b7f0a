"""Figure: the same policies on the shipped model's recorded routing (all layers, decode order).

LRU is drawn at every capacity, so its cliff at the shortest reuse distance, (layers - 1) x
top-k + 1, is never hidden between two samples; LFU and Belady at a sample of capacities that
includes both sides of the cliff (core.experiments.cache_policies.model_curves). X ticks fall on
whole tokens' working sets (layers x top-k).
"""

from __future__ import annotations

import numpy as np

from core.experiments.cache_policies import model_curves, model_requests
from tabs.cache_policies.common import POLICY_STYLE, SHORT_LABEL
from tabs.figure import FigureResult, Projector, brief, lab_figure
from tabs.palette import ROLE

# projector: one legend below the plot, clear of the curves and the cliff's note
LOOK = Projector(legends="below",
                 words={POLICY_STYLE["belady"]["label"]: SHORT_LABEL["belady"]})


def policy_model_curve(tokens: int) -> FigureResult:
    m = model_curves(tokens)
    keys, cliff, ws = m.keys, m.cliff, m.working_set
    with lab_figure(3.9, look=LOOK) as fig:
        ax = fig.subplots()
        ax.axvspan(0, m.topk + 1, color=ROLE["empty"], lw=0, zorder=0)
        ax.axhline(100 * m.ceiling, color=ROLE["neutral"], lw=1.2, ls="--",
                   label=brief(ax, f"compulsory-miss ceiling without prefetch "
                               f"{100 * m.ceiling:.1f}%", f"ceiling {100 * m.ceiling:.1f}%"))
        st = POLICY_STYLE["lru"]
        live = slice(m.topk, None)  # from the top-k floor, as the other policies
        ax.plot(m.every[live], 100 * m.lru[live], color=st["color"], ls=st["ls"], lw=1.8,
                label=brief(ax, f"{st['label']}, at every capacity", "LRU, at every C"))
        for p in ("lfu", "belady"):
            st = POLICY_STYLE[p]
            ax.plot(m.sampled, 100 * m.rates[p], color=st["color"], ls=st["ls"],
                    marker=st["marker"], ms=3.5, label=st["label"])
        ax.annotate(
            brief(ax, f"LRU: 0% up to C = {cliff - 1}, {100 * m.at('lru', cliff):.1f}% at {cliff}\n"
                  f"shortest reuse distance (layers − 1) × top-k + 1 = "
                  f"({m.layers} − 1) × {m.topk} + 1 = {cliff}",
                  f"LRU: 0% up to C = {cliff - 1}\n"
                  f"reuse distance ({m.layers} − 1) × {m.topk} + 1 = {cliff}"),
            xy=(cliff, 100 * m.at("lru", cliff)), xytext=(cliff + 9, 5), fontsize=8,
            color=ROLE["annotation"], va="bottom",
            arrowprops={"arrowstyle": "->", "color": ROLE["annotation"], "lw": 0.8})
        ax.set_xlim(0, keys)
        ax.set_ylim(0, 100)
        ax.set_xticks(range(0, keys + 1, ws))
        ax.set_ylabel(brief(ax, "hit rate (% of gets)", "hit rate (%)"))
        ax.set_xlabel(brief(ax, f"cache capacity C (experts resident, of {m.layers} layers × "
                            f"{m.n_experts} = {keys}); a tick every token's working set, "
                            f"{m.layers} × top-{m.topk} = {ws}",
                            f"cache capacity C (of {m.layers} × {m.n_experts} = {keys}); "
                            f"a tick every {m.layers} × top-{m.topk} = {ws}"))
        ax.set_title(brief(ax, f"The shipped model's routing in decode order: {m.tokens} "
                           f"held-out tokens × {m.layers} layers × top-{m.topk}",
                           f"The model's real routing: {m.tokens} tokens × {m.layers} layers × "
                           f"top-{m.topk}"))
        ax.legend(loc="lower right")
    lfu_lru = np.array([m.at("lfu", int(c)) - m.at("lru", int(c)) for c in m.sampled])
    metrics: dict[str, int | float | bool] = {
        "gets": len(model_requests(tokens)[0]), "ceiling": m.ceiling, "lru_cliff": cliff,
        "token_working_set": ws, "lru_zero_below_cliff": bool(np.all(m.lru[: cliff - 1] == 0)),
        "lfu_over_lru_at_sampled": int(np.sum(lfu_lru > 0)), "sampled": len(m.sampled),
    }
    for p in ("lru", "lfu", "belady"):
        metrics[f"{p}_at_cliff"] = m.at(p, cliff)
        metrics[f"{p}_at_working_set"] = m.at(p, ws)
        metrics[f"{p}_at_half"] = m.at(p, keys // 2)
    return FigureResult(fig, metrics)
