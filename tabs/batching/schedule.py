"""Figure (the hero's): the scheduler stepped through. Requests (rows) against engine steps
(columns): each cell is what the request did in that step; underneath, the tokens each step
fed against its budget. The step slider reveals the run one step at a time (later steps
faint). Counts only: the same on every machine."""

from __future__ import annotations

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from core.experiments.batching import KINDS, Run, run
from core.experiments.batching_workload import MAX_STEPS
from tabs.batching.common import KIND_COLOUR, KIND_LABEL, settings_line
from tabs.figure import FigureResult, lab_figure
from tabs.glyphs import labels
from tabs.palette import ROLE

DIM = 0.78  # the white veil over the steps still to come
LABEL_PT = 7.0  # cell numbers (prefill chunk and verify window tokens)
LABELLED = ("prefill", "replay", "verify")  # cells whose tokens are written in them


def shown_steps(step: int, n: int) -> tuple[int, str]:
    """The last step shown and the words for it (never a silent clamp)."""
    if step < n:
        return step, f"steps 1-{step} of {n}"
    asked = f" (asked for {step})" if n < step < MAX_STEPS else ""
    return n, f"steps 1-{n} of {n}: all{asked}"


def _bars(ax, x: np.ndarray, bottom: np.ndarray, h: np.ndarray, colour: str) -> None:
    """Bars of height h on `bottom` at x as one collection (zero heights skipped)."""
    verts = [[(xi - 0.4, b), (xi - 0.4, b + hi), (xi + 0.4, b + hi), (xi + 0.4, b)]
             for xi, b, hi in zip(x.tolist(), bottom.tolist(), h.tolist(), strict=True) if hi]
    ax.add_collection(PolyCollection(verts, facecolors=colour, edgecolors="none", linewidths=0),
                      autolim=False)


def _grid(ax, r: Run, k: int, words: str, cell_pt: float) -> None:
    n, rows = len(r.steps), len(r.requests)
    code = np.array([[KINDS.index(c.kind) for c in st.cells] for st in r.steps]).T  # [R, n]
    cmap = ListedColormap([KIND_COLOUR[kind] for kind in KINDS])
    norm = BoundaryNorm(np.arange(len(KINDS) + 1) - 0.5, cmap.N)
    ax.pcolormesh(np.arange(n + 1) + 0.5, np.arange(rows + 1) - 0.5, code, cmap=cmap, norm=norm,
                  edgecolors="white", linewidth=0.5)
    ax.grid(False)
    ax.set_xlim(0.5, n + 0.5)
    ax.set_ylim(rows - 0.5, -0.5)  # the first arrival on top
    fit = cell_pt >= 2.2 * LABEL_PT  # three digits fit the cell
    if fit:
        cells = [(j + 1, i, str(c.tokens)) for j, st in enumerate(r.steps[:k])
                 for i, c in enumerate(st.cells) if c.kind in LABELLED]
        labels(ax, [(x, y) for x, y, _ in cells], [t for _, _, t in cells], LABEL_PT, "white")
    done = [(j + 1, i) for j, st in enumerate(r.steps[:k]) for i, c in enumerate(st.cells)
            if c.finished]
    if done:
        xs, ys = zip(*done, strict=True)
        ax.plot(np.array(xs) + 0.32, ys, "o", ms=4, color=ROLE["reference"], mec="white",
                mew=0.6, lw=0, zorder=4)
    if k < n:
        ax.axvspan(k + 0.5, n + 0.5, color="white", alpha=DIM, lw=0, zorder=5)
    ax.axvspan(k - 0.5, k + 0.5, fill=False, ec=ROLE["reference"], lw=1.6, zorder=6)
    ax.set_yticks(range(rows))
    ax.set_yticklabels([f"#{s.request} {s.prompt_tokens}+{s.n_new}"
                        + (f" γ{s.draft_len}" if s.draft_len else "") for s in r.requests])
    ax.set_ylabel("request (prompt + new bytes)")
    ax.set_title(f"What each request did in each step, {words}", loc="left")
    ax.tick_params(labelbottom=False)


def _budget(ax, r: Run, k: int) -> None:
    n = len(r.steps)
    x = np.arange(1, n + 1)
    prompt = np.array([st.prompt_tokens for st in r.steps])
    decode = np.array([st.decode_tokens for st in r.steps])
    _bars(ax, x, np.zeros(n), prompt, KIND_COLOUR["prefill"])
    _bars(ax, x, prompt, decode, KIND_COLOUR["decode"])
    ax.axhline(r.max_step_tokens, color=ROLE["annotation"], ls="--", lw=1.0)
    ax.set_xlim(0.5, n + 0.5)
    ax.set_ylim(0, r.max_step_tokens * 1.15)
    ax.set_yticks([0, r.max_step_tokens])
    ax.set_xlabel("engine step")
    ax.set_ylabel("tokens fed")
    ax.set_title(f"Tokens each step fed, against its budget of {r.max_step_tokens}",
                 loc="left")
    if k < n:
        ax.axvspan(k + 0.5, n + 0.5, color="white", alpha=DIM, lw=0, zorder=5)


def batching_schedule(max_batch: int, max_step_tokens: int, prefill_chunk: int, policy: str,
                      admission: str, pool_pages: int, spacing: int, step: int) -> FigureResult:
    knobs = (max_batch, max_step_tokens, prefill_chunk, policy, admission, pool_pages, spacing)
    r = run(*knobs, True)
    n = len(r.steps)
    k, words = shown_steps(step, n)
    with lab_figure(6.2) as fig:
        grid, budget = fig.subplots(2, 1, sharex=True,
                                    gridspec_kw={"height_ratios": [3, 1.3]})
        cell_pt = fig.get_figwidth() * 72 * 0.8 / n
        _grid(grid, r, k, words, cell_pt)
        _budget(budget, r, k)
        fig.suptitle(settings_line(*knobs), x=0.01, ha="left", fontsize=9,
                     color=ROLE["annotation"])
        shown = [kind for kind in KINDS[1:]
                 if any(c.kind == kind for st in r.steps for c in st.cells)]
        handles = [Patch(color=KIND_COLOUR[kind], label=KIND_LABEL[kind]) for kind in shown]
        handles.append(Line2D([], [], marker="o", ms=4, lw=0, color=ROLE["reference"],
                              label="last byte"))
        fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=8,
                   handlelength=1.2, columnspacing=1.0)
    now = r.steps[k - 1]
    count = {kind: sum(c.kind == kind for st in r.steps for c in st.cells) for kind in KINDS}
    metrics = {
        "step": step, "shown_steps": k, "complete": k == n, "run_steps": n,
        "tokens_at_step": now.tokens, "budget": r.max_step_tokens,
        "running_at_step": sum(c.kind in ("prefill", "replay", "decode", "verify", "stalled")
                               for c in now.cells),
        **{f"cells_{kind}": count[kind] for kind in KINDS[1:]},
        "preemptions": r.preemptions, "recomputed_tokens": r.recomputed,
        "peak_pages": r.peak_pages,
        "steps_at_budget": sum(st.tokens == st.budget for st in r.steps),
    }
    return FigureResult(fig, metrics)
