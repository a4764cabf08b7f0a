"""Figure: checkpoint spacing vs reusable tokens vs memory. Left, the staircase: what a request
sharing s tokens with the cached prompt can reuse. Right, one point per spacing: pages held by
checkpoint groups against the mean reusable prefix."""

from __future__ import annotations

from dataclasses import dataclass

from core.experiments.prefix_spacing import sweep
from core.experiments.scenes import SHARED, SPACINGS
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

# A projector: the staircase's key below both panels (over the plot it covers the steps).
LOOK = Projector(legends="below")


@dataclass(frozen=True, kw_only=True)
class SpacingLayout:
    ends_label: str  # the two end spacings' "k=" labels: "beside" their points, or "under" them
    mean_x: float  # where stage 1's mean's label starts (pages)
    pages_from: float  # the tradeoff's pages axis's left end


# a projector labels the chosen k and the two ends (those under their points), and needs room
# for a label on the left (stage 1's mean)
SPACING = Arrangement(
    normal=SpacingLayout(ends_label="beside", mean_x=5, pages_from=-10),
    projector=SpacingLayout(ends_label="under", mean_x=-50, pages_from=-60))


def _staircase(ax, sw, k: int) -> None:
    pt, dense = sw.point(k), sw.point(SPACINGS[0])
    ax.step(sw.shared, pt.matched, where="post", color=ROLE["mla"], ls=":", lw=1.2,
            label="stage 1: tokens in matched blocks")
    if k != SPACINGS[0]:
        ax.step(sw.shared, dense.reusable, where="post", color=ROLE["neutral"], lw=1.0,
                label=f"reusable, a group every block (k = {SPACINGS[0]})")
    ax.step(sw.shared, pt.reusable, where="post", color=ROLE["hit"], lw=2.2,
            label=f"reusable, a group every {k} block(s)")
    top = sw.prompt_tokens
    ax.axvline(SHARED, color=ROLE["annotation"], ls="--", lw=0.9)
    ax.text(SHARED - 6, top * 0.03, f"the hit preset\nshares {SHARED}", ha="right", va="bottom",
            fontsize=7.5)
    ax.plot([0, top], [0, top], color=ROLE["grid"], lw=1.0, zorder=0)
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ticks = range(0, top + 1, sw.block_tokens * 2)
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)
    ax.set_xlabel("tokens the request shares with the cached prompt")
    ax.set_ylabel("tokens reusable (not recomputed)")
    steps = f"steps of {sw.block_tokens} × {k} = {sw.block_tokens * k} tokens"
    ax.set_title(brief(ax, f"The staircase: {steps}", steps.capitalize()))
    ax.legend(loc="upper left", fontsize=7.5)


def _tradeoff(ax, sw, k: int, lay: SpacingLayout) -> None:
    xs = [p.group_pages for p in sw.points]
    ys = [p.mean_reusable for p in sw.points]
    ax.plot(xs, ys, "-", color=ROLE["neutral"], lw=0.8, zorder=1)
    for p in sw.points:
        me = p.checkpoint_every == k
        ax.plot([p.group_pages], [p.mean_reusable], "o", ms=10 if me else 6,
                color=ROLE["hit"] if me else ROLE["kda"], mec=ROLE["reference"] if me else "none",
                zorder=3)
        odd = p.checkpoint_every % 2  # odd k labelled on the left: equal pages do not collide
        first = p.checkpoint_every in (SPACINGS[0], SPACINGS[-1])
        under = first and lay.ends_label == "under"
        label = ax.annotate(f"k={p.checkpoint_every}", (p.group_pages, p.mean_reusable),
                            xytext=(0, -10) if under else (-7 if odd else 7, -3),
                            textcoords="offset points", fontsize=7.5,
                            ha="center" if under else "right" if odd else "left",
                            va="top" if under else "center",
                            fontweight="bold" if me else "normal")
        if not (me or first or p.checkpoint_every == SPACINGS[-1]):  # a projector: those alone
            shorten(label, "")
    ceiling = sum(sw.points[0].matched) / len(sw.shared)
    ax.axhline(ceiling, color=ROLE["mla"], ls=":", lw=1.2)
    ax.text(lay.mean_x, ceiling + 6, brief(ax, "stage 1's mean (every boundary usable)",
                                           "stage 1's mean"), fontsize=7, color=ROLE["mla"])
    ax.set_xlim(lay.pages_from, max(xs) * 1.12)
    ax.set_ylim(0, ceiling * 1.25)
    ax.set_xlabel(f"pages held by checkpoint groups (pool: {sw.pool_pages} pages)")
    ax.set_ylabel(brief(ax, "mean tokens reusable over the probes", "mean tokens reusable"))
    ax.set_title(brief(ax, "Memory vs reuse, one point per spacing k", "Memory vs reuse"))


@arranged_by(SPACING)
def prefix_spacing(checkpoint_every: int, *, lay: SpacingLayout) -> FigureResult:
    sw, k = sweep(), checkpoint_every
    pt = sw.point(k)
    with lab_figure(4.3, look=LOOK) as fig:
        left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.25, 1]})
        _staircase(left, sw, k)
        _tradeoff(right, sw, k, lay)
    dense = sw.point(SPACINGS[0])
    metrics = {
        "checkpoint_every": k,
        "prompt_tokens": sw.prompt_tokens,
        "probes": len(sw.shared),
        "groups_held": pt.groups,
        "group_pages": pt.group_pages,
        "block_pages": pt.block_pages,
        "group_share_of_cache_pages": pt.group_pages / (pt.group_pages + pt.block_pages),
        "mean_reusable_tokens": pt.mean_reusable,
        "mean_tokens_lost_to_spacing": pt.mean_lost,
        "dense_group_pages": dense.group_pages,
        "dense_mean_reusable_tokens": dense.mean_reusable,
    }
    return FigureResult(fig, metrics)
