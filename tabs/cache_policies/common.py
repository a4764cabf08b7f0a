"""The look of each policy on the Cache policies figures. Their traces and curves:
core.experiments.cache_policies."""

from __future__ import annotations

import numpy as np

from core.experts.policies import POLICIES
from tabs.palette import ROLE

POLICY_STYLE = {  # Belady reads the future: it is the bound, drawn like a reference
    "lru": {"color": ROLE["replay"], "ls": "-", "marker": "o", "label": "LRU (the live cache)"},
    "lfu": {"color": ROLE["rejected"], "ls": "--", "marker": "s", "label": "LFU"},
    "belady": {"color": ROLE["reference"], "ls": ":", "marker": "^",
               "label": "Belady (best without prefetch; needs the future)"},
}
SHORT_LABEL = {"lru": "LRU", "lfu": "LFU", "belady": "Belady (reads the future)"}  # projector


def plot_policies(ax, caps: np.ndarray, rates: dict[str, np.ndarray], keys: int) -> None:
    """One line per policy, hit rate in % against capacity in [0, keys] (a projector's words for
    their labels: SHORT_LABEL)."""
    for p in POLICIES:
        st = POLICY_STYLE[p]
        ax.plot(caps, 100 * rates[p], color=st["color"], ls=st["ls"], marker=st["marker"],
                ms=3.5, label=st["label"])
    ax.set_xlim(0, keys)
    ax.set_ylim(0, 100)
    ax.set_ylabel("hit rate (% of gets)")

