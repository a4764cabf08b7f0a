"""Figure: the step timeline of one request. Top, every verify pass as a column of its window:
the pending token, then the drafts, accepted or rejected, and the positions replayed after a
rollback. Bottom, the bytes each rollback moved (a window kept whole moves nothing)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator

from core.experiments.engine import run
from core.model.manifest import shipped_dims as dims
from tabs.engine.common import MAX_PASSES
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE
from tabs.units import KIB, fmt_bytes

EMPTY, PENDING, ACCEPTED, REJECTED = range(4)
CELLS = ListedColormap([ROLE["empty"], ROLE["neutral"], ROLE["accepted"], ROLE["rejected"]])
DIM = 0.78  # white veil over the passes still to come
# A projector: short titles, labels and keys, both legends gathered in one row above the panels.
KEYS = {"pending token (always kept)": "pending", "accepted draft": "accepted",
        "rejected draft": "rejected", "replayed after the rollback": "replayed",
        "window kept whole: nothing moved": "kept whole"}


@dataclass(frozen=True, kw_only=True)
class TimelineLayout:
    thin_rows_past: int | None  # more drafts than this: every other draft row named; None: all


# a projector: the draft rows named by number alone (the look's words), every other one past 5;
# the pass range goes below (the x label)
TIMELINE = Arrangement(normal=TimelineLayout(thin_rows_past=None),
                       projector=TimelineLayout(thin_rows_past=5))


def shown_passes(step: int, n: int) -> tuple[int, str]:
    """The last pass shown and, in words, what the figure shows (never a silent clamp)."""
    if step < n:
        return step, f"passes 1-{step} of {n}"
    return n, f"passes 1-{n} of {n}: all"


def _veil(ax, k: int, n: int) -> None:
    if k < n:
        ax.axvspan(k - 0.5, n - 0.5, color="white", alpha=DIM, lw=0, zorder=4)
    ax.axvspan(k - 1.5, k - 0.5, fill=False, ec=ROLE["reference"], lw=2.0, zorder=5)


@arranged_by(TIMELINE)
def engine_timeline(draft_len: int, kind: str, step: int = MAX_PASSES, *,
                    lay: TimelineLayout) -> FigureResult:
    r, g = run(kind, draft_len), draft_len
    passes = r.passes
    n = len(passes)
    k, words = shown_passes(step, n)
    grid = np.full((g + 1, n), EMPTY)  # [window position, pass]
    for j, p in enumerate(passes):
        grid[0, j] = PENDING
        grid[1 : 1 + p.accepted, j] = ACCEPTED
        grid[1 + p.accepted : 1 + p.drafted, j] = REJECTED
    n_kda = dims().n_kda
    moved = np.array([p.moved_bytes for p in passes]) / KIB  # [pass] KiB
    look = Projector(words={**KEYS, **{f"draft {i}": str(i) for i in range(1, g + 1)}},
                     legends="above")
    with lab_figure(5.2, look=look) as fig:
        top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[1.5, 1])
        top.pcolormesh(np.arange(n + 1) - 0.5, np.arange(g + 2) - 0.5, grid, cmap=CELLS,
                       vmin=-0.5, vmax=3.5, edgecolors="white", linewidth=0.8)
        xs = [j for j, p in enumerate(passes) for _ in range(p.replayed)]
        ys = [i for p in passes for i in range(p.replayed)]
        top.scatter(xs, ys, s=10, color="white", edgecolors=ROLE["reference"], linewidths=0.6,
                    zorder=3)
        top.grid(False)
        top.set_xlim(-0.5, n - 0.5)
        top.set_ylim(-0.5, g + 0.5)
        every = 2 if lay.thin_rows_past is not None and g > lay.thin_rows_past else 1
        rows = [0] + list(range(every, g + 1, every))
        top.set_yticks(rows, ["pending"] + [f"draft {i}" for i in rows[1:]])
        top.set_ylabel(brief(top, "window position", "draft"))
        top.set_title(brief(top, f"{kind}, gamma {g}, {words}; in all {r.accepted} of "
                            f"{r.drafted} drafts accepted, {r.rollbacks} rollbacks",
                            f"{kind}, gamma {g}: in all {r.accepted} of {r.drafted} accepted, "
                            f"{r.rollbacks} rollbacks"), loc="left", fontsize=10)
        _veil(top, k, n)
        replayed = Line2D([], [], ls="", marker="o", mfc="white", mec=ROLE["reference"], ms=4,
                          label="replayed after the rollback")
        top.legend(handles=[
            Patch(color=ROLE["neutral"], label="pending token (always kept)"),
            Patch(color=ROLE["accepted"], label="accepted draft"),
            Patch(color=ROLE["rejected"], label="rejected draft"),
            replayed,
        ], loc="upper left", bbox_to_anchor=(0, -0.02), ncol=4, fontsize=9)
        bottom.bar(np.arange(n), moved, width=0.8, color=ROLE["replay"])
        kept = [j for j, p in enumerate(passes) if p.replayed == 0]
        bottom.scatter(kept, [0] * len(kept), marker="|", s=80, color=ROLE["accepted"],
                       zorder=3, label="window kept whole: nothing moved")
        bottom.set_ylim(0, max(moved.max(initial=0.0), 1.0) * 1.25)
        bottom.set_xlim(-0.5, n - 0.5)
        bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
        bottom.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{int(v) + 1}"))  # 1-based
        _veil(bottom, k, n)
        moved_so_far = sum(p.moved_bytes for p in passes[:k])
        so_far = (f"{fmt_bytes(r.moved_bytes)} in all" if k == n else
                  f"{fmt_bytes(moved_so_far)} by pass {k} of {n}")
        bottom.set_xlabel(brief(bottom, "verify pass", f"verify pass ({words})"))
        bottom.set_ylabel(brief(bottom, "KiB read + written\n(S twice, replayed inputs)",
                                "KiB moved"))
        bottom.set_title(brief(bottom, f"Bytes each rollback moved over the {n_kda} KDA "
                               f"layers: {so_far}",
                               f"Rollback bytes, {n_kda} KDA layers: {so_far}"),
                         loc="left", fontsize=10)
        bottom.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=9,
                      borderaxespad=0.1)
        for ax in (top, bottom):
            ax.tick_params(labelsize=9)
    return FigureResult(fig, {
        "kind": kind, "draft_len": g, "verify_passes": n, "drafted": r.drafted,
        "accepted": r.accepted, "rollbacks": r.rollbacks, "moved_bytes": r.moved_bytes,
        "held_bytes": r.held_bytes, "snapshot_bytes": r.snapshot_bytes,
        "pages_released": sum(p.pages_released for p in passes),
        "step": step, "shown_passes": k, "complete": k == n,
        "accepted_so_far": sum(p.accepted for p in passes[:k]),
        "moved_bytes_so_far": moved_so_far})
