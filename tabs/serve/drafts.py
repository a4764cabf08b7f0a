"""Figure: speculative decoding of this request: drafts accepted and rejected per verify
pass, and the bytes held for rollback (replayed inputs vs per-position snapshots)."""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib as mpl
import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.ticker import MaxNLocator

from core.experiments.serve import final
from core.serve.live import ServeSnapshot
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE
from tabs.units import KIB, fmt_bytes

# A projector: the key under both panels (over the bars it would cover the tallest).
LOOK = Projector(legends="below")


@dataclass(frozen=True, kw_only=True)
class DraftsLayout:
    passes_width: float  # the verify passes' panel's width, the held bytes' being 1


# a projector: the rollback panel a wider share, for its labels in larger text
DRAFTS = Arrangement(normal=DraftsLayout(passes_width=2.2),
                     projector=DraftsLayout(passes_width=1.9))


def _bars(ax, x: np.ndarray, bottom: np.ndarray, height: np.ndarray, colour: str,
          label: str, width: float = 0.8) -> None:
    """Bars as one collection (the non-empty ones): ax.bar made a Rectangle per verify pass,
    up to ~2 x 200 a figure, each autoscaled and drawn on its own (issue 14)."""
    keep = height > 0
    x0 = x[keep] - width / 2
    y0 = bottom[keep].astype(float)
    y1 = y0 + height[keep]
    verts = np.stack([np.column_stack(c) for c in
                      ((x0, y0), (x0, y1), (x0 + width, y1), (x0 + width, y0))], axis=1)
    ax.add_collection(PolyCollection(verts, facecolors=colour, edgecolors="none", linewidths=0,
                                     label=label), autolim=False)


def _drafts(snap: ServeSnapshot, lay: DraftsLayout) -> FigureResult:
    steps = np.array(snap.steps, dtype=int).reshape(-1, 2)  # [passes, (drafted, accepted)]
    drafted, accepted = steps[:, 0], steps[:, 1]
    with lab_figure(3.0, look=LOOK) as fig:
        ax, bx = fig.subplots(1, 2, width_ratios=[lay.passes_width, 1])
        if len(steps) == 0:
            for a in (ax, bx):
                a.set_axis_off()
            ax.text(0.0, 0.5, "Draft length 0: plain greedy decoding, one byte per forward "
                    "pass,\nnothing drafted and nothing to roll back.", fontsize=11,
                    transform=ax.transAxes, va="center")
            ax.set_title("Speculative decoding is off", loc="left")
            return FigureResult(fig, {"verify_passes": 0, "drafted": 0, "accepted": 0})
        x = np.arange(len(steps))
        _bars(ax, x, np.zeros_like(accepted), accepted, ROLE["accepted"], "accepted drafts")
        _bars(ax, x, accepted, drafted - accepted, ROLE["rejected"],
              "rejected drafts (rolled back)")
        pad = (len(steps) - 0.2) * mpl.rcParams["axes.xmargin"]  # as ax.bar's autoscale
        ax.set_xlim(-0.4 - pad, len(steps) - 0.6 + pad)
        ax.set_xlabel("verify pass (each also emits one token of its own)")
        ax.set_ylabel("drafted bytes")
        rate = accepted.sum() / max(drafted.sum(), 1)
        ax.set_title(f"{accepted.sum()} of {drafted.sum()} drafts accepted ({100 * rate:.0f}%), "
                     f"{len(snap.text)} bytes in {len(steps)} passes", loc="left")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts: whole bytes, passes
        ax.xaxis.set_major_locator(MaxNLocator("auto", integer=True, steps=[1, 2, 2.5, 5, 10]))
        ax.set_ylim(0, drafted.max() + 1.6)
        ax.legend(loc="upper left", frameon=False, fontsize=9, ncol=2)
        held = [snap.replay_bytes / len(steps) / KIB, snap.snapshot_bytes / len(steps) / KIB]
        bx.bar([0, 1], held, color=[ROLE["replay"], ROLE["snapshot"]])
        bx.set_xticks([0, 1], [brief(bx, "replay inputs", "replay"), "snapshots"])
        for i, v in enumerate(held):
            bx.text(i, v, fmt_bytes(v * KIB), ha="center", va="bottom", fontsize=9)
        bx.set_ylabel(brief(bx, "KiB per verify pass (mean)", "KiB per pass (mean)"))
        bx.set_title("Held for rollback", loc="left")
        bx.set_ylim(0, max(held) * 1.2 + 1)
    return FigureResult(fig, {"verify_passes": len(steps), "drafted": int(drafted.sum()),
                              "accepted": int(accepted.sum()),
                              "replay_bytes": snap.replay_bytes,
                              "snapshot_bytes": snap.snapshot_bytes})


@arranged_by(DRAFTS)
def draw_drafts(snap: ServeSnapshot, *, lay: DraftsLayout) -> FigureResult:
    """A snapshot of a run, as the run streams (RunSpec.draws)."""
    return _drafts(snap, lay)


@arranged_by(DRAFTS)
def serve_drafts(prompt: str, n_new: int, draft_len: int, capacity: int, prefix_cache: bool,
                 routing: bool, *, lay: DraftsLayout) -> FigureResult:
    return _drafts(final(prompt=prompt, n_new=n_new, draft_len=draft_len, capacity=capacity,
                         prefix_cache=prefix_cache, routing=routing), lay)
