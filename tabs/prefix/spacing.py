"""Figure: checkpoint spacing vs reusable tokens vs memory. Left, the staircase: what a request
sharing s tokens with the cached prompt can reuse. Right, one point per spacing: pages held by
checkpoint groups against the mean reusable prefix."""

from __future__ import annotations

from core.experiments.prefix_spacing import sweep
from core.experiments.scenes import SHARED, SPACINGS
from tabs.figure import FigureResult, lab_figure
from tabs.palette import ROLE


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
    ax.set_title(f"The staircase: steps of {sw.block_tokens} × {k} = {sw.block_tokens * k} "
                 f"tokens")
    ax.legend(loc="upper left", fontsize=7.5)


def _tradeoff(ax, sw, k: int) -> None:
    xs = [p.group_pages for p in sw.points]
    ys = [p.mean_reusable for p in sw.points]
    ax.plot(xs, ys, "-", color=ROLE["neutral"], lw=0.8, zorder=1)
    for p in sw.points:
        me = p.checkpoint_every == k
        ax.plot([p.group_pages], [p.mean_reusable], "o", ms=10 if me else 6,
                color=ROLE["hit"] if me else ROLE["kda"], mec=ROLE["reference"] if me else "none",
                zorder=3)
        odd = p.checkpoint_every % 2  # odd k labelled on the left: equal pages do not collide
        ax.annotate(f"k={p.checkpoint_every}", (p.group_pages, p.mean_reusable),
                    xytext=(-7 if odd else 7, -3), textcoords="offset points", fontsize=7.5,
                    ha="right" if odd else "left", va="center",
                    fontweight="bold" if me else "normal")
    ceiling = sum(sw.points[0].matched) / len(sw.shared)
    ax.axhline(ceiling, color=ROLE["mla"], ls=":", lw=1.2)
    ax.text(5, ceiling + 6, "stage 1's mean (every boundary usable)", fontsize=7,
            color=ROLE["mla"])
    ax.set_xlim(-10, max(xs) * 1.12)
    ax.set_ylim(0, ceiling * 1.25)
    ax.set_xlabel(f"pages held by checkpoint groups (pool: {sw.pool_pages} pages)")
    ax.set_ylabel("mean tokens reusable over the probes")
    ax.set_title("Memory vs reuse, one point per spacing k")


def prefix_spacing(checkpoint_every: int) -> FigureResult:
    sw, k = sweep(), checkpoint_every
    pt = sw.point(k)
    with lab_figure(4.3) as fig:
        left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.25, 1]})
        _staircase(left, sw, k)
        _tradeoff(right, sw, k)
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
