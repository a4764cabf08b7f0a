"""Figure: time to first token and time per output token of every request, in engine steps,
under both policies at the tab's other settings: the trade chunked prefill makes
(Sarathi-Serve). Left, steps from arrival to the first byte; right, steps per byte after it
(1 is one byte every step; a speculative request can beat 1)."""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import MaxNLocator

from core.experiments.batching import run
from tabs.batching.common import POLICY_COLOUR, POLICY_LABEL, settings_line
from tabs.figure import FigureResult, lab_figure
from tabs.palette import ROLE

POLICIES = ("prefill_first", "mixed")
WIDTH = 0.38


def batching_latency(max_batch: int, max_step_tokens: int, prefill_chunk: int, policy: str,
                     admission: str, pool_pages: int, spacing: int) -> FigureResult:
    runs = {p: run(max_batch, max_step_tokens, prefill_chunk, p, admission, pool_pages, spacing,
                   True) for p in POLICIES}
    reqs = runs[policy].requests
    x = np.arange(len(reqs))
    with lab_figure(4.2) as fig:
        ttft, tpot = fig.subplots(1, 2)
        for j, p in enumerate(POLICIES):
            mine = p == policy
            style = dict(width=WIDTH, color=POLICY_COLOUR[p], alpha=1.0 if mine else 0.45,
                         label=POLICY_LABEL[p] + (", chosen" if mine else ""))
            ttft.bar(x + (j - 0.5) * WIDTH, [s.ttft for s in runs[p].requests], **style)
            tpot.bar(x + (j - 0.5) * WIDTH, [s.tpot for s in runs[p].requests], **style)
        tpot.axhline(1.0, color=ROLE["annotation"], ls="--", lw=1.0,
                     label="one byte every step")
        names = [f"#{s.request}" + (f"\nγ{s.draft_len}" if s.draft_len else "") for s in reqs]
        for ax in (ttft, tpot):
            ax.set_xticks(x)
            ax.set_xticklabels(names)
            ax.set_xlabel("request, in arrival order")
        top = max(s.ttft for r in runs.values() for s in r.requests)
        ttft.set_ylim(0, top * 1.1 + 1)
        ttft.yaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
        ttft.set_ylabel("steps to the first byte")
        ttft.set_title("Time to first token", loc="left")
        slow = max(s.tpot for r in runs.values() for s in r.requests)
        tpot.set_ylim(0, max(2.0, slow * 1.1))
        tpot.set_ylabel("steps per byte after the first")
        tpot.set_title("Time per output token", loc="left")
        fig.suptitle(settings_line(max_batch, max_step_tokens, prefill_chunk, policy, admission,
                                   pool_pages, spacing).split(", ", 1)[1],
                     x=0.01, ha="left", fontsize=9, color=ROLE["annotation"])
        handles, texts = tpot.get_legend_handles_labels()
        fig.legend(handles, texts, loc="outside lower center", ncols=3, fontsize=8)
    metrics: dict[str, object] = {"policy": policy}
    for p, r in runs.items():
        metrics[f"{p}_ttft_mean"] = float(np.mean([s.ttft for s in r.requests]))
        metrics[f"{p}_ttft_max"] = max(s.ttft for s in r.requests)
        metrics[f"{p}_tpot_max"] = max(s.tpot for s in r.requests)
        metrics[f"{p}_steps"] = len(r.steps)
    for s in reqs:
        metrics[f"ttft_{s.request}"] = s.ttft
        metrics[f"tpot_{s.request}"] = s.tpot
    return FigureResult(fig, metrics)
