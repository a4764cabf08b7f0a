"""Figure: push / commit / rollback / flush timing of the raw-input ring, and the snapshot ring's
pushes, pops and overwrites over the same verify steps."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from core.experiments.replay_ring import session
from core.speculative.session import SlotKind
from tabs.figure import (
    Arrangement,
    FigureResult,
    Projector,
    arranged_by,
    brief,
    lab_figure,
    shorten,
)
from tabs.glyphs import labels
from tabs.palette import ROLE
from tabs.replay_ring.common import DIM, KIND_COLOUR, KIND_LABEL, fixed_ticks, shown_steps

KINDS = tuple(SlotKind)
TEXT_MAX_STEPS, TEXT_MAX_SLOTS = 24, 16
SHORT_LABEL = {**KIND_LABEL, SlotKind.ACCEPTED: "pushed, committed",
               SlotKind.ROLLED_BACK: "pushed, rejected"}
CELL_PT = 9  # the cell numbers' and flush counts' size in points
# NOTE: at most ~MAX_LABELS labelled ticks an axis: every step up to 12 steps, then every 2nd
# (1, 3, 5, ...) or 4th step; every slot up to 16 slots, then every 4th. The tick labels of
# both panels were the largest cost left after the cell numbers (issue 14).
MAX_LABELS = 12
COUNT_LIFT_PT = 4.0  # a flush count's baseline above the axes: 2 pt clear of it, as a text's
# bottom (descent included) 2 pt above it was
# Normal mode places the panels by hand where constrained layout put them (figure fractions,
# checked at every capacity 4..32 and several step counts): the legends right of the panels and
# the titles, x labels and tick label heights never move; the left margin is one digit wider
# when the snapshot panel's lowest y tick has two digits (-10 or below, capacity >= 12).
PANEL_X = {False: (0.052448, 0.62617), True: (0.060448, 0.61825)}  # wide: (left, width)
TOP_Y, TOP_H, BOTTOM_Y, BOTTOM_H = 0.407723, 0.535627, 0.069618, 0.232881
FLUSH = "flush before the pushes\n(number: entries folded)"
CURRENT = "the current step\n(later ones faint)"
# A projector: the ring's legend above the panels, the snapshots' below, in rows; shorter
# entries (no cell numbers, so no legend title for them).
LOOK = Projector(words={
    **{KIND_LABEL[k]: SHORT_LABEL[k] for k in KINDS if KIND_LABEL[k] != SHORT_LABEL[k]},
    FLUSH: "flush (n folded)", CURRENT: "current step", "numbers: token position": "",
    "pushes (one state each)": "pushes", "…that overwrote an unpopped snapshot":
    "…overwrote unpopped", "pops (oldest first)": "pops", "snapshots held after the step": "held",
    "snapshots (pops < 0)": "snapshots"}, legends=("above", "below"))


@dataclass(frozen=True, kw_only=True)
class TimelineLayout:
    cell_numbers: bool  # the ring's cells carry their token numbers (small rings, short runs)
    ring_step_labels: bool  # the ring panel's own step tick labels under it


# a projector: the ring's cells are too small for their numbers, and the step tick labels are
# shown once, under the panel below
TIMELINE = Arrangement(normal=TimelineLayout(cell_numbers=True, ring_step_labels=True),
                       projector=TimelineLayout(cell_numbers=False, ring_step_labels=False))


def _stride(n: int) -> int:
    """Label every 1st, 2nd or 4th of n positions: at most MAX_LABELS of them (n <= 48)."""
    return 1 if n <= MAX_LABELS else 2 if n <= 2 * MAX_LABELS else 4


def _veil(ax, k: int, n: int) -> None:
    """Dim the steps after k (still to come) and frame step k (the current one)."""
    if k < n:
        ax.axvspan(k + 0.5, n + 0.5, color="white", alpha=DIM, lw=0, zorder=4)
    ax.axvspan(k - 0.5, k + 0.5, fill=False, ec=ROLE["reference"], lw=2.0, zorder=5)


def _heatmap(ax, s, k: int, words: str, lay: TimelineLayout) -> None:
    """Draw the raw-input ring and its legend."""
    p, recs = s.params, s.steps
    kind = np.array([r.slot_kind for r in recs], dtype=int).T  # [L, steps]
    cmap = ListedColormap([KIND_COLOUR[k] for k in KINDS])
    norm = BoundaryNorm(np.arange(len(KINDS) + 1) - 0.5, cmap.N)
    x = np.arange(p.steps + 1) + 0.5
    y = np.arange(p.capacity + 1) - 0.5
    ax.pcolormesh(x, y, kind, cmap=cmap, norm=norm, edgecolors="white", linewidth=0.6)
    ax.grid(False)
    ax.set_xlim(0.5, p.steps + 0.5)
    ax.set_ylim(p.capacity - 0.5, -0.5)  # slot 0 on top
    if lay.cell_numbers and p.steps <= TEXT_MAX_STEPS and p.capacity <= TEXT_MAX_SLOTS:
        cells = [(col, slot, int(tok)) for col, r in enumerate(recs[:k], start=1)
                 for slot, (kind, tok) in enumerate(zip(r.slot_kind, r.slot_token, strict=True))
                 if kind in (SlotKind.ACCEPTED, SlotKind.ROLLED_BACK)]
        labels(ax, [(c, s) for c, s, _ in cells], [str(t) for _, _, t in cells], CELL_PT,
               "white")  # one collection (tabs/glyphs.py)
    ax.plot(np.arange(1, k + 1) - 0.36, [r.start for r in recs[:k]], ">", ms=4,
            color=ROLE["annotation"], lw=0)
    gap, last = (1 if p.steps <= TEXT_MAX_STEPS else 2), -99
    flushes = [col - 0.5 for col, r in enumerate(recs[:k], start=1) if r.flushed]
    if flushes:  # one collection: each axvline re-ran the autoscale over every artist drawn
        ax.vlines(flushes, 0, 1, transform=ax.get_xaxis_transform(), color=ROLE["annotation"],
                  lw=1.8)
    counts: list[tuple[float, int]] = []  # (x, entries folded), bold just above the axes
    for col, r in enumerate(recs[:k], start=1):
        if r.flushed and col - last >= gap:  # keep the counts legible when flushes are dense
            counts.append((col - 0.5, r.flushed))
            last = col
    labels(ax, [(x, 1.0) for x, _ in counts], [str(n) for _, n in counts], CELL_PT, "black",
           bold=True, lift=COUNT_LIFT_PT, transform=ax.get_xaxis_transform(), clip_on=False)
    ax.set_ylabel("physical slot")
    # the x axis: the panel below's (a projector shows its labels there only)
    shorten(ax.set_xlabel("verify step"), "")
    ax.tick_params(labelbottom=lay.ring_step_labels)
    ax.set_xticks(np.arange(1, p.steps + 1, _stride(p.steps)))
    ax.set_yticks(np.arange(0, p.capacity, 1 if p.capacity <= 16 else 4))
    _veil(ax, k, p.steps)
    title = brief(ax, f"Raw-input ring, L = {p.capacity}, {words}: a step pushes γ + 1 = "
                  f"{p.window} entries, bonus token first",
                  f"Raw-input ring, L = {p.capacity}, {words}: γ + 1 = {p.window} pushes a step")
    # y=1.0: a fixed title spot (no x ticks on top), so a draw skips measuring every axis
    ax.set_title(title, loc="left", pad=16, y=1.0)
    handles = [Patch(color=KIND_COLOUR[k], label=KIND_LABEL[k]) for k in KINDS]
    handles += [Line2D([], [], marker=">", lw=0, color=ROLE["annotation"], label="start pointer"),
                Line2D([], [], color=ROLE["annotation"], lw=1.8, label=FLUSH),
                Rectangle((0, 0), 1, 1, fill=False, ec=ROLE["reference"], lw=2.0,
                          label=CURRENT)]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9,
              title="numbers: token position", title_fontsize=9)


def _bars(ax, x: np.ndarray, h: np.ndarray, width: float = 0.7, **kw) -> None:
    """Bars of height h at x (zero heights skipped) as one collection: ax.bar made a Rectangle
    artist per bar, ~60 a figure, each laid out and drawn on its own (issue 14)."""
    half = width / 2
    verts = [[(xi - half, 0), (xi - half, hi), (xi + half, hi), (xi + half, 0)]
             for xi, hi in zip(x.tolist(), h.tolist(), strict=True) if hi]
    kw.setdefault("edgecolor", "none")
    kw.setdefault("linewidths", 0)
    ax.add_collection(PolyCollection(verts, **kw), autolim=False)


def _snapshots(ax, s, k: int) -> None:
    """Draw the snapshot ring and its legend."""
    p, recs = s.params, s.steps
    x = np.arange(1, p.steps + 1)
    push = np.array([r.snap_pushes for r in recs])
    over = np.array([r.snap_overwrites for r in recs])
    pops = np.array([r.snap_pops for r in recs])
    _bars(ax, x, push, facecolor=ROLE["snapshot"], alpha=0.45,
          label="pushes (one state each)")
    _bars(ax, x, over, facecolor=ROLE["waste"], hatch="///", edgecolor="white", linewidths=1,
          label="…that overwrote an unpopped snapshot")
    _bars(ax, x, -pops, facecolor=ROLE["neutral"], label="pops (oldest first)")
    ax.step(x, [r.snap_held for r in recs], where="mid", color=ROLE["snapshot"],
            label="snapshots held after the step")
    ax.axhline(p.capacity, color=ROLE["snapshot"], ls="--", lw=0.9,
               label=f"capacity L = {p.capacity}")
    ax.axhline(0, color=ROLE["annotation"], lw=0.6)
    ax.set_xlim(0.5, p.steps + 0.5)
    ax.set_ylim(-p.capacity - 0.5, p.capacity + 1.5)
    fixed_ticks(ax.yaxis, -p.capacity - 0.5, p.capacity + 1.5, nbins=6, integer=True)
    ax.set_xticks(np.arange(1, p.steps + 1, _stride(p.steps)))
    ax.set_xlabel("verify step")
    ax.set_ylabel("snapshots (pops < 0)")
    ax.set_title(brief(ax, f"Snapshot ring, same capacity: {p.window} full-state pushes per step, "
                       "FIFO overwrite when full",
                       f"Snapshot ring: {p.window} full-state pushes a step, FIFO overwrite"),
                 loc="left", y=1.0)
    handles, labels = ax.get_legend_handles_labels()
    order = [labels.index(x) for x in labels if "held" not in x and "capacity" not in x]
    order += [i for i in range(len(labels)) if i not in order]
    handles, labels = [handles[i] for i in order], [labels[i] for i in order]
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
    _veil(ax, k, p.steps)


def _place(fig) -> None:
    top, bottom = fig.axes
    left, width = PANEL_X[bool(min(bottom.get_yticks()) <= -10)]
    top.set_position([left, TOP_Y, width, TOP_H])
    bottom.set_position([left, BOTTOM_Y, width, BOTTOM_H])


@arranged_by(TIMELINE)
def ring_timeline(capacity: int, draft_len: int, accept_rate: float, steps: int,
                  seed: int, step: int, *, lay: TimelineLayout) -> FigureResult:
    s = session(capacity, draft_len, accept_rate, steps, seed)
    recs = s.steps
    k, words = shown_steps(step, len(recs))
    # normal mode: fixed margins (_place): constrained layout was ~25% of a redraw
    with lab_figure(6.6, look=LOOK, place=_place) as fig:
        top, bottom = fig.subplots(2, 1, gridspec_kw={"height_ratios": [2.3, 1]})
        _heatmap(top, s, k, words, lay)
        _snapshots(bottom, s, k)
        for ax in (top, bottom):
            ax.tick_params(labelsize=9)
    rolled = sum(r.snap_pushes - r.n_committed for r in recs)
    now = recs[k - 1]
    metrics = {
        "step": step, "shown_steps": k, "complete": k == len(recs),
        "start_pointer_at_step": now.start, "accepted_at_step": now.n_accepted,
        "flushes_so_far": sum(1 for r in recs[:k] if r.flushed),
        "tokens_committed_so_far": sum(r.n_committed for r in recs[:k]),
        "verify_steps": len(recs),
        "tokens_pushed": sum(r.snap_pushes for r in recs),
        "tokens_committed": s.num_committed,
        "tokens_rolled_back": rolled,
        "flushes": sum(1 for r in recs if r.flushed),
        "tokens_flushed": sum(r.flushed for r in recs),
        "max_committed_in_ring": max(r.committed_before + r.n_committed for r in recs),
        "final_start_pointer": recs[-1].start,
        "snapshot_pushes": sum(r.snap_pushes for r in recs),
        "snapshot_pops": sum(r.snap_pops for r in recs),
        "snapshot_overwrites": sum(r.snap_overwrites for r in recs),
        "snapshot_max_held": max(r.snap_held for r in recs),
    }
    return FigureResult(fig, metrics)
