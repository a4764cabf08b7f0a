"""The routing trace behind the policy figures, and its hit-rate curves (cached per knobs)."""

from __future__ import annotations

import functools

import numpy as np

from core.experts import compulsory_ceiling, hit_rate_curve, synthetic_trace
from core.experts.policies import POLICIES
from tabs.palette import ROLE

MAX_POINTS = 24  # capacities replayed per curve: enough for a smooth line, cheap to compute
POLICY_STYLE = {  # Belady reads the future: it is the bound, drawn like a reference
    "lru": {"color": ROLE["replay"], "ls": "-", "marker": "o", "label": "LRU (the live cache)"},
    "lfu": {"color": ROLE["rejected"], "ls": "--", "marker": "s", "label": "LFU"},
    "belady": {"color": ROLE["reference"], "ls": ":", "marker": "^",
               "label": "Belady (best without prefetch; needs the future)"},
}
SHORT_LABEL = {"lru": "LRU", "lfu": "LFU", "belady": "Belady (reads the future)"}  # presenting


@functools.lru_cache(maxsize=32)
def trace(tokens: int, n_experts: int, topk: int, skew: float, persistence: float,
          seed: int) -> np.ndarray:
    """(tokens * topk, 2) (layer, expert) gets of one layer, read-only."""
    t = synthetic_trace(tokens, 1, n_experts, topk, skew, persistence, seed)
    t.flags.writeable = False
    return t


def capacities(topk: int, n_keys: int) -> np.ndarray:
    """Capacities from the floor topk + 1 up to every key (expert) resident, at most MAX_POINTS."""
    return np.unique(np.linspace(topk + 1, n_keys, MAX_POINTS).round().astype(int))


@functools.lru_cache(maxsize=32)
def curves(tokens: int, n_experts: int, topk: int, skew: float, persistence: float,
           seed: int) -> tuple[np.ndarray, dict[str, np.ndarray], float]:
    """(capacities, {policy: hit rate at each}, compulsory-miss ceiling)."""
    tr = trace(tokens, n_experts, topk, skew, persistence, seed)
    caps = capacities(topk, n_experts)
    rates = hit_rate_curve(tr, [int(c) for c in caps], POLICIES)
    return caps, rates, compulsory_ceiling(tr)


def plot_policies(ax, caps: np.ndarray, rates: dict[str, np.ndarray], keys: int,
                  short: bool = False) -> None:
    """One line per policy, hit rate in % against capacity in [0, keys] (short: SHORT_LABEL)."""
    for p in POLICIES:
        st = POLICY_STYLE[p]
        ax.plot(caps, 100 * rates[p], color=st["color"], ls=st["ls"], marker=st["marker"],
                ms=3.5, label=SHORT_LABEL[p] if short else st["label"])
    ax.set_xlim(0, keys)
    ax.set_ylim(0, 100)
    ax.set_ylabel("hit rate (% of gets)")

