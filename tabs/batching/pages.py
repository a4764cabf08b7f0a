"""Figure: pages. Top left, every request's pages alone: its KDA state (a constant block per KDA
layer) and its MLA pages (one per MLA layer per 64 tokens); top right, how many requests the
pool holds at once against its size, each with every page it can need (reserve) or only its
first chunk's (optimistic), and the most this run held; below, the pool step by step (the
requests' pages and the prefix cache's) with each preemption, and what preemption cost: tokens
recomputed with the prefix cache and without it."""

from __future__ import annotations

import numpy as np

from core.experiments.batching import fit_at_once, run
from core.experiments.batching_workload import POOL_MAX, POOL_MIN, POOL_STEP
from tabs.figure import FigureResult, lab_figure
from tabs.palette import ROLE


def batching_pages(max_batch: int, max_step_tokens: int, prefill_chunk: int, policy: str,
                   admission: str, pool_pages: int, spacing: int) -> FigureResult:
    knobs = (max_batch, max_step_tokens, prefill_chunk, policy, admission, pool_pages, spacing)
    on, off = run(*knobs, True), run(*knobs, False)
    reqs = on.requests
    y = np.arange(len(reqs))
    full = [s.mla_pages + s.kda_pages for s in reqs]
    first = [s.first_pages for s in reqs]
    pools = np.arange(POOL_MIN, POOL_MAX + 1, POOL_STEP)
    peak = max(sum(c.kind not in ("absent", "waiting") for c in st.cells) for st in on.steps)
    with lab_figure(6.0) as fig:
        axs = fig.subplot_mosaic([["each", "fits"], ["redo", "redo"]])
        each, fits, redo = axs["each"], axs["fits"], axs["redo"]
        each.barh(y, [s.kda_pages for s in reqs], color=ROLE["kda"], label="KDA state")
        each.barh(y, [s.mla_pages for s in reqs], left=[s.kda_pages for s in reqs],
                  color=ROLE["mla"], label="MLA latents")
        each.set_yticks(y)
        each.set_yticklabels([f"#{s.request}" for s in reqs])
        each.set_ylim(len(reqs) - 0.5, -0.6)
        each.set_xlim(0, max(full) * 1.1)
        each.set_xticks(range(0, max(full) + 1, 10))
        each.set_xlabel("pages, prompt + new bytes")
        each.set_title("Pages per request", loc="left")

        fits.step(pools, [fit_at_once(int(p), full) for p in pools], where="post",
                  color=ROLE["reference"], label="reserve: every page")
        fits.step(pools, [fit_at_once(int(p), first) for p in pools], where="post",
                  color=ROLE["neutral"], ls="--", label="optimistic: first chunk")
        fits.axvline(pool_pages, color=ROLE["annotation"], ls=":", lw=1.0)
        fits.plot([pool_pages], [peak], "o", color=POLICY_DOT, ms=6, label="most at once, this run")
        fits.set_xlim(POOL_MIN - POOL_STEP, POOL_MAX + POOL_STEP)
        fits.set_ylim(0, len(reqs) + 0.5)
        fits.set_yticks(range(0, len(reqs) + 1, 2))
        fits.set_xticks(range(40, POOL_MAX + 1, 40))
        fits.set_xlabel("page pool (pages)")
        fits.set_ylabel("requests holding pages at once")
        fits.set_title("Requests that fit", loc="left")

        steps = np.arange(1, len(on.steps) + 1)
        cache = np.array([st.cache_pages for st in on.steps])
        mine = np.array([st.pages_used for st in on.steps]) - cache
        redo.stackplot(steps, mine, cache, colors=(ROLE["annotation"], ROLE["neutral"]),
                       alpha=0.8, labels=("requests", "prefix cache"), step="mid")
        redo.axhline(pool_pages, color=ROLE["reference"], ls="--", lw=1.0, label="pool")
        hits = [st.index for st in on.steps if any(c.kind == "preempted" for c in st.cells)]
        if hits:
            redo.plot(hits, [pool_pages * 1.04] * len(hits), "v", color=ROLE["miss"], ms=7,
                      lw=0, label="preemption")
        redo.set_xlim(0.5, len(on.steps) + 0.5)
        redo.set_ylim(0, pool_pages * 1.12)
        redo.set_xlabel("engine step")
        redo.set_ylabel("pages in use")
        redo.set_title(f"Pages in use, step by step: {on.preemptions} preemptions\n"
                       f"{on.recomputed} tokens redone ({off.recomputed} with no prefix cache)",
                       loc="left")
        handles = [h for ax in (each, fits, redo) for h in ax.get_legend_handles_labels()[0]]
        fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8)
    metrics = {
        "pool_pages": pool_pages, "admission": admission,
        "kda_pages_per_request": reqs[0].kda_pages,
        "mla_pages_min": min(s.mla_pages for s in reqs),
        "mla_pages_max": max(s.mla_pages for s in reqs),
        "fit_reserve": fit_at_once(pool_pages, full),
        "fit_optimistic": fit_at_once(pool_pages, first),
        "most_at_once": peak,
        "preemptions_cache": on.preemptions, "recomputed_cache": on.recomputed,
        "preemptions_no_cache": off.preemptions, "recomputed_no_cache": off.recomputed,
        "peak_pages": on.peak_pages, "peak_cache_pages": max(st.cache_pages for st in on.steps),
    }
    return FigureResult(fig, metrics)


POLICY_DOT = ROLE["miss"]
