"""Figure: the routing trace itself (token x expert raster) and the popularity it implies."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from core.experiments.cache_policies import check_geometry, trace
from core.experts import repeats_previous
from tabs.figure import FigureResult, Projector, brief, lab_figure
from tabs.palette import ROLE

SHOWN = 256  # tokens drawn in the raster
# presenting: short titles and labels, one legend in a row below
LOOK = Projector(words={
    "chosen, new vs the last token": "new vs the last token",
    "chosen again (persistence)": "kept (persistence)",
    "expert, by popularity rank (0 = most requested)": "expert popularity rank",
    "expert popularity rank": "popularity rank",
    "share of all gets (%); at most 1/top-k": "% of gets"}, legends="below")


def policy_trace(skew: float, persistence: float, topk: int, n_experts: int, tokens: int,
                 seed: int) -> FigureResult:
    check_geometry(topk, n_experts)
    ids = trace(tokens, n_experts, topk, skew, persistence, seed)[:, 1].reshape(tokens, topk)
    counts = np.bincount(ids.ravel(), minlength=n_experts)  # (E,) gets per expert
    order = np.argsort(-counts, kind="stable")  # most requested first
    rank = np.empty(n_experts, int)
    rank[order] = np.arange(n_experts)
    shown = min(tokens, SHOWN)
    grid = np.zeros((n_experts, shown), np.int8)  # 0 idle, 1 new, 2 kept from the last token
    kept = repeats_previous(ids)  # (T, k)
    for t in range(shown):
        grid[rank[ids[t]], t] = np.where(kept[t], 2, 1)
    share = 100 * counts[order] / counts.sum()
    top = max(1, round(n_experts / 10))
    with lab_figure(4.4, look=LOOK) as fig:
        left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2.4, 1]})
        cmap = ListedColormap(["white", ROLE["annotation"], ROLE["hit"]])
        left.imshow(grid, aspect="auto", cmap=cmap, vmin=0, vmax=2,
                    extent=(-0.5, shown - 0.5, n_experts - 0.5, -0.5))
        left.grid(False)
        left.set_xlabel(f"token (first {shown} of {tokens})")
        chosen = [Patch(fc=ROLE["annotation"], label="chosen, new vs the last token"),
                  Patch(fc=ROLE["hit"], label="chosen again (persistence)")]
        left.set_ylabel("expert, by popularity rank (0 = most requested)")
        left.set_title(brief(left, f"Routing trace: top-{topk} of {n_experts} experts per "
                             "token, one layer",
                             f"Trace: top-{topk} of {n_experts} experts, one layer"))
        left.legend(handles=chosen, loc="lower right", ncol=2, frameon=True, framealpha=0.95)
        right.stairs(share, np.arange(n_experts + 1) - 0.5, fill=True, color=ROLE["replay"])
        right.axhline(100 / n_experts, color=ROLE["neutral"], ls="--", lw=1.0,
                      label=f"uniform: 1/E = {100 / n_experts:.1f}%")
        right.set_xlim(-0.5, n_experts - 0.5)
        right.set_ylim(0, max(100 / topk, 100 / n_experts) * 1.05)
        right.set_xlabel("expert popularity rank")
        right.set_ylabel("share of all gets (%); at most 1/top-k")
        right.set_title(brief(right, f"Popularity: the top {top}\nserve "
                              f"{share[:top].sum():.0f}% of gets",
                              f"Top {top}: {share[:top].sum():.0f}%"))
        right.legend(loc="upper right")
    metrics = {
        "gets": int(counts.sum()), "distinct_experts": int((counts > 0).sum()),
        "top1_share_pct": float(share[0]), "top_decile_experts": top,
        "top_decile_share_pct": float(share[:top].sum()),
        "measured_persistence": float(kept[1:].mean()) if tokens > 1 else 0.0,
        "tokens_shown": shown,
    }
    return FigureResult(fig, metrics)
