"""Figure: the same policies on the shipped model's recorded routing (all layers, decode order).

LRU is drawn at every capacity (from stack distances, one pass), so its cliff at the shortest
reuse distance, (layers - 1) x top-k + 1, is never hidden between two samples; LFU and Belady
are replayed at a sample of capacities that includes both sides of the cliff. X ticks fall on
whole tokens' working sets (layers x top-k).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from core.experts import compulsory_ceiling, hit_rate_curve
from core.experts.working_set import lru_cliff, lru_curve, token_working_set
from core.model.trace import TRACE_FILE, load, request_trace
from core.model.weights import ASSET_DIR
from tabs.cache_policies.common import POLICY_STYLE, capacities
from tabs.figure import FigureResult, lab_figure
from tabs.palette import ROLE


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCurves:
    tokens: int  # tokens replayed (at most the trace's)
    layers: int  # MoE layers in the trace
    n_experts: int  # experts per layer
    topk: int
    every: np.ndarray  # capacities 1..keys
    lru: np.ndarray  # LRU hit rate at every capacity
    sampled: np.ndarray  # capacities LFU and Belady are replayed at
    rates: dict[str, np.ndarray]  # {"lfu", "belady"} at `sampled`
    ceiling: float

    @property
    def keys(self) -> int:
        return self.layers * self.n_experts

    @property
    def cliff(self) -> int:
        return lru_cliff(self.layers, self.topk)

    @property
    def working_set(self) -> int:
        return token_working_set(self.layers, self.topk)

    def at(self, policy: str, c: int) -> float:
        if policy == "lru":
            return float(self.lru[c - 1])
        return float(self.rates[policy][list(self.sampled).index(c)])


@functools.lru_cache(maxsize=16)
def model_requests(tokens: int) -> tuple[np.ndarray, int, int, int]:
    """(requests of the first `tokens` tokens in decode order, layers, experts, top-k)."""
    t = load(ASSET_DIR / TRACE_FILE)
    n_tokens, n_layers, topk = t.chosen.shape
    reqs = request_trace(t)[: min(tokens, n_tokens) * n_layers * topk]  # token, layer, rank
    reqs.flags.writeable = False
    return reqs, n_layers, t.n_experts, topk


@functools.lru_cache(maxsize=16)
def model_curves(tokens: int) -> ModelCurves:
    reqs, n_layers, n_experts, topk = model_requests(tokens)
    keys = n_layers * n_experts
    every = np.arange(1, keys + 1)
    cliff, ws = lru_cliff(n_layers, topk), token_working_set(n_layers, topk)
    sampled = np.unique(np.concatenate([capacities(topk, keys), [cliff - 1, cliff, ws, keys // 2]]))
    rates = hit_rate_curve(reqs, [int(c) for c in sampled], ("lfu", "belady"))
    return ModelCurves(tokens=len(reqs) // (n_layers * topk), layers=n_layers, n_experts=n_experts,
                       topk=topk, every=every, lru=lru_curve(reqs, every), sampled=sampled,
                       rates=rates, ceiling=compulsory_ceiling(reqs))


def policy_model_curve(tokens: int) -> FigureResult:
    m = model_curves(tokens)
    keys, cliff, ws = m.keys, m.cliff, m.working_set
    with lab_figure(3.9) as fig:
        ax = fig.subplots()
        ax.axvspan(0, m.topk + 1, color=ROLE["empty"], lw=0, zorder=0)
        ax.axhline(100 * m.ceiling, color=ROLE["neutral"], lw=1.2, ls="--",
                   label=f"compulsory-miss ceiling without prefetch {100 * m.ceiling:.1f}%")
        st = POLICY_STYLE["lru"]
        live = slice(m.topk, None)  # from the top-k floor, as the other policies
        ax.plot(m.every[live], 100 * m.lru[live], color=st["color"], ls=st["ls"], lw=1.8,
                label=f"{st['label']}, at every capacity")
        for p in ("lfu", "belady"):
            st = POLICY_STYLE[p]
            ax.plot(m.sampled, 100 * m.rates[p], color=st["color"], ls=st["ls"],
                    marker=st["marker"], ms=3.5, label=st["label"])
        ax.annotate(
            f"LRU: 0% up to C = {cliff - 1}, {100 * m.at('lru', cliff):.1f}% at {cliff}\n"
            f"shortest reuse distance (layers − 1) × top-k + 1 = "
            f"({m.layers} − 1) × {m.topk} + 1 = {cliff}",
            xy=(cliff, 100 * m.at("lru", cliff)), xytext=(cliff + 9, 5), fontsize=8,
            color=ROLE["annotation"], va="bottom",
            arrowprops={"arrowstyle": "->", "color": ROLE["annotation"], "lw": 0.8})
        ax.set_xlim(0, keys)
        ax.set_ylim(0, 100)
        ax.set_xticks(range(0, keys + 1, ws))
        ax.set_ylabel("hit rate (% of gets)")
        ax.set_xlabel(f"cache capacity C (experts resident, of {m.layers} layers × {m.n_experts}"
                      f" = {keys}); a tick every token's working set, {m.layers} × top-{m.topk}"
                      f" = {ws}")
        ax.set_title(f"The shipped model's routing in decode order: {m.tokens} held-out tokens × "
                     f"{m.layers} layers × top-{m.topk}")
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
