"""Figure: the page pool after this request (pages by holder and kind) and how much of the
prompt the prefix cache served."""

from __future__ import annotations

from dataclasses import dataclass

from core.experiments.serve import final
from core.serve.live import ServeSnapshot
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE


@dataclass(frozen=True, kw_only=True)
class MemoryLayout:
    pool_width: float  # the pool panel's width, the prompt panel's being 1


# a projector: the prompt panel a wider share, for its title and ticks in larger text
MEMORY = Arrangement(normal=MemoryLayout(pool_width=1.6), projector=MemoryLayout(pool_width=1.4))


def _memory(snap: ServeSnapshot, lay: MemoryLayout) -> FigureResult:
    p = snap.pages
    parts = [("this request: KDA state", "request KDA", p.request_kda, ROLE["kda"], 1.0),
             ("this request: MLA KV", "request MLA", p.request_mla, ROLE["mla"], 1.0),
             ("prefix cache: KDA checkpoints", "cached KDA", p.cache_kda, ROLE["kda"], 0.4),
             ("prefix cache: MLA KV", "cached MLA", p.cache_mla, ROLE["mla"], 0.4),
             ("free", "free", p.free, ROLE["empty"], 1.0)]
    computed = snap.prompt_tokens - snap.reused_tokens
    # a projector: both legends in one below the panels (no room for one under each)
    with lab_figure(3.3, look=Projector(legends="below")) as fig:
        ax, bx = fig.subplots(1, 2, width_ratios=[lay.pool_width, 1])
        left = 0
        for long, short, n, colour, alpha in parts:
            ax.barh(0, n, left=left, color=colour, alpha=alpha, edgecolor="white",
                    label=brief(ax, f"{long} ({n})", f"{short} ({n})"))
            left += n
        ax.set_xlim(0, p.total)
        ax.set_yticks([])
        ax.set_xlabel(f"pages of the pool ({p.total} in all)")
        ax.set_title("Where the pool's pages are", loc="left")
        bx.barh(0, snap.reused_tokens, color=ROLE["hit"],
                label=brief(bx, "reused from the prefix cache", "reused"))
        bx.barh(0, computed, left=snap.reused_tokens, color=ROLE["neutral"],
                label=brief(bx, "computed by prefill", "computed"))
        bx.set_xlim(0, max(snap.prompt_tokens, 1))
        bx.set_yticks([])
        bx.set_xlabel("prompt tokens")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2, frameon=False,
                  fontsize=9)
        reused = f"{snap.reused_tokens} of {snap.prompt_tokens} tokens reused"
        bx.set_title(brief(bx, f"Prompt: {reused}", reused), loc="left")
        bx.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=1, frameon=False,
                  fontsize=9)
    metrics = {"pages_total": p.total, "pages_free": p.free, "request_kda": p.request_kda,
               "request_mla": p.request_mla, "cache_kda": p.cache_kda, "cache_mla": p.cache_mla,
               "prompt_tokens": snap.prompt_tokens, "reused_tokens": snap.reused_tokens}
    return FigureResult(fig, metrics)


@arranged_by(MEMORY)
def draw_memory(snap: ServeSnapshot, *, lay: MemoryLayout) -> FigureResult:
    """A snapshot of a run, as the run streams (RunSpec.draws)."""
    return _memory(snap, lay)


@arranged_by(MEMORY)
def serve_memory(prompt: str, n_new: int, draft_len: int, capacity: int, prefix_cache: bool,
                 routing: bool, *, lay: MemoryLayout) -> FigureResult:
    return _memory(final(prompt=prompt, n_new=n_new, draft_len=draft_len, capacity=capacity,
                         prefix_cache=prefix_cache, routing=routing), lay)
