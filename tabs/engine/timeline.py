"""Figure: the step timeline of one request. Top, every verify pass as a column of its window:
the pending token, then the drafts, accepted or rejected, and the positions replayed after a
rollback. Bottom, the bytes each rollback moved (a window kept whole moves nothing)."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from tabs.engine.common import run
from tabs.figure import FigureResult, lab_figure
from tabs.model.common import dims
from tabs.palette import ROLE
from tabs.units import KIB, fmt_bytes

EMPTY, PENDING, ACCEPTED, REJECTED = range(4)
CELLS = ListedColormap([ROLE["empty"], ROLE["neutral"], ROLE["accepted"], ROLE["rejected"]])


def engine_timeline(draft_len: int, kind: str) -> FigureResult:
    r, g = run(kind, draft_len), draft_len
    passes = r.passes
    n = len(passes)
    grid = np.full((g + 1, n), EMPTY)  # [window position, pass]
    for j, p in enumerate(passes):
        grid[0, j] = PENDING
        grid[1 : 1 + p.accepted, j] = ACCEPTED
        grid[1 + p.accepted : 1 + p.drafted, j] = REJECTED
    n_kda = dims().n_kda
    moved = np.array([p.moved_bytes for p in passes]) / KIB  # [pass] KiB
    with lab_figure(5.2) as fig:
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
        top.set_yticks(range(g + 1), ["pending"] + [f"draft {i}" for i in range(1, g + 1)])
        top.set_ylabel("window position")
        top.set_title(f"{kind}, gamma {g}: {r.accepted} of {r.drafted} drafts accepted, "
                      f"{len(passes)} verify passes for {r.n_new - 1} bytes, "
                      f"{r.rollbacks} rollbacks", loc="left")
        top.legend(handles=[
            Patch(color=ROLE["neutral"], label="pending token (always kept)"),
            Patch(color=ROLE["accepted"], label="accepted draft"),
            Patch(color=ROLE["rejected"], label="rejected draft"),
            Line2D([], [], ls="", marker="o", mfc="white", mec=ROLE["reference"], ms=4,
                   label="replayed after the rollback"),
        ], loc="upper left", bbox_to_anchor=(0, -0.02), ncol=4, fontsize=8)
        bottom.bar(np.arange(n), moved, width=0.8, color=ROLE["replay"])
        kept = [j for j, p in enumerate(passes) if p.replayed == 0]
        bottom.scatter(kept, [0] * len(kept), marker="|", s=80, color=ROLE["accepted"],
                       zorder=3, label="window kept whole: nothing moved")
        bottom.set_ylim(0, max(moved.max(initial=0.0), 1.0) * 1.25)
        bottom.set_xlim(-0.5, n - 0.5)
        bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
        bottom.set_xlabel("verify pass")
        bottom.set_ylabel("KiB read + written\n(S twice, replayed inputs)")
        bottom.set_title(f"Bytes each rollback moved over the {n_kda} KDA layers: "
                         f"{fmt_bytes(r.moved_bytes)} in all", loc="left")
        bottom.legend(loc="upper right", fontsize=8)
    return FigureResult(fig, {
        "kind": kind, "draft_len": g, "verify_passes": n, "drafted": r.drafted,
        "accepted": r.accepted, "rollbacks": r.rollbacks, "moved_bytes": r.moved_bytes,
        "held_bytes": r.held_bytes, "snapshot_bytes": r.snapshot_bytes,
        "pages_released": sum(p.pages_released for p in passes)})
