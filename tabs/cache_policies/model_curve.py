"""Figure: the same policies on the shipped model's recorded routing (all layers, decode order)."""

from __future__ import annotations

import functools

import numpy as np

from core.experts import compulsory_ceiling, hit_rate_curve
from core.experts.policies import POLICIES
from core.model.trace import TRACE_FILE, load, request_trace
from core.model.weights import ASSET_DIR
from tabs.cache_policies.common import capacities, plot_policies
from tabs.figure import FigureResult, lab_figure
from tabs.palette import ROLE


@functools.lru_cache(maxsize=16)
def _curves(tokens: int) -> tuple[np.ndarray, dict[str, np.ndarray], float, int, int, int]:
    t = load(ASSET_DIR / TRACE_FILE)
    n_tokens, n_layers, topk = t.chosen.shape
    tokens = min(tokens, n_tokens)
    reqs = request_trace(t)[: tokens * n_layers * topk]  # token-major, then layer, then rank
    keys = n_layers * t.n_experts
    caps = capacities(topk, keys)
    rates = hit_rate_curve(reqs, [int(c) for c in caps], POLICIES)
    return caps, rates, compulsory_ceiling(reqs), n_layers, t.n_experts, topk


def policy_model_curve(tokens: int) -> FigureResult:
    caps, rates, ceiling, n_layers, n_experts, topk = _curves(tokens)
    keys = n_layers * n_experts
    with lab_figure(3.8) as fig:
        ax = fig.subplots()
        ax.axvspan(0, topk + 1, color=ROLE["empty"], lw=0, zorder=0)
        ax.axhline(100 * ceiling, color=ROLE["neutral"], lw=1.2, ls="--",
                   label=f"compulsory-miss ceiling {100 * ceiling:.1f}%")
        plot_policies(ax, caps, rates, keys)
        ax.axvline(keys / 4, color=ROLE["annotation"], lw=0.8)
        ax.text(keys / 4, 4, " a quarter of all experts", fontsize=7.5, color=ROLE["annotation"])
        ax.set_xlabel(f"cache capacity (experts resident, of {n_layers} layers × {n_experts})")
        ax.set_title(f"The shipped model's routing: {tokens} held-out tokens decoded, "
                     f"top-{topk} in each of {n_layers} layers (assets/model/trace.npz)")
        ax.legend(loc="lower right")
    quarter = int(np.argmin(np.abs(caps - keys / 4)))
    metrics: dict[str, int | float] = {"gets": int(tokens * n_layers * topk), "ceiling": ceiling,
                                       "quarter_capacity": int(caps[quarter])}
    for p in POLICIES:
        metrics[f"{p}_at_quarter"] = float(rates[p][quarter])
    return FigureResult(fig, metrics)
