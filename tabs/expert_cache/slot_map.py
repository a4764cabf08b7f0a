"""Figure: the slot map over time, revealed up to a token. Top: what each slot holds after each
step (state and origin, expert ids, pins, counter windows). Bottom: what each step threw away
or failed to read (evictions, wasted prefetches, failed reads, the shard cut)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.path import Path
from matplotlib.text import TextPath
from matplotlib.transforms import Affine2D, ScaledTranslation

from core.experiments.expert_cache import scenario_run
from core.experts.scenarios.progress import Progress, progress
from tabs.expert_cache.common import FS, cell_role, legible, tint
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE

IDLE_TINT = 0.55  # slots not touched in a step are drawn lighter
FUTURE = (0.985, 0.985, 0.985)  # steps after the shown token: not drawn yet
KIND_LETTER = {"prefetch": "P", "consume": "G", "warm": "W"}
GRID = {"left": 0.075, "right": 0.79, "top": 0.9, "bottom": 0.13, "hspace": 0.3}
# projector: both legends gathered in rows above the map, in short words
LOOK = Projector(words={
    "loaded by a miss": "miss", "loaded ahead,\nnot yet used": "ahead, unused",
    "loaded ahead,\nthen used": "ahead, used", "pale: not touched\nin this step":
    "pale: untouched", "counters reset:\na new window": "new window",
    "the current step": "current step", "evicted unused:\na wasted prefetch": "wasted prefetch",
    "read that never\ncompleted": "read failed"}, legends="above")
ID_PT = 8.5  # expert ids in the cells: at most this size (points) ...
ID_FILL = 0.5 / 0.72  # ... and at most this fraction of a cell's width
WINDOW_LABEL_PT = 15.84  # a window narrower than this (points) gets no "w3" label
GROUP_PT_PER_CHAR, GROUP_PT = 5.76, 2.88  # a group narrower than its name (points): unnamed


@dataclass(frozen=True, kw_only=True)
class SlotMapLayout:
    height_ratios: tuple[float, float]  # the map's height against the events panel's
    map_width: float  # the map's width, as a fraction of the figure's (sizes its cells)
    event_ticks: str  # the events axis's ticks: "spaced" (about three), or its "ends" alone
    rows_in: str  # step letters, group names: in "axes" fractions of the panel, or "points"
    rows_below: tuple[float, float]  # how far under the events panel the letters, the names sit
    steps_pad: float  # the step axis's label, under the letters and names (points)


# a projector: the events panel keeps room for its larger text; the plot spans about the whole
# width (the legends in rows above it); the panel's height is not the normal one, so the letters
# and names under it sit at offsets in points
SLOT_MAP = Arrangement(
    normal=SlotMapLayout(height_ratios=(3.2, 1), map_width=GRID["right"] - GRID["left"],
                         event_ticks="spaced", rows_in="axes", rows_below=(0.12, 0.24),
                         steps_pad=34),
    projector=SlotMapLayout(height_ratios=(2.6, 1), map_width=0.9, event_ticks="ends",
                            rows_in="points", rows_below=(9, 17), steps_pad=30))


def where_words(run, p: Progress) -> str:
    """What the figures show, plainly: which token, which step, and whether that is all."""
    unit = "chunk" if run.name == "pressure" else "token"
    if p.shown == 0:
        return f"token {p.token}: no step yet"
    st = run.steps[p.current]
    at = "the opening" if st.group in ("probe", "setup") else (
        f"{unit} {st.group[1:]}" if unit == "chunk" else f"token {st.group[1:]}")
    if p.complete:
        past = "" if p.token <= p.last_token else f" (asked for {p.token})"
        return f"all {p.total} steps{past}"
    return f"up to {at}: step {p.shown} of {p.total}"


@arranged_by(SLOT_MAP)
def cache_slot_map(slots: int, scenario: str, topk: int, schedule: int, seed: int,
                   token: int, *, lay: SlotMapLayout) -> FigureResult:
    run = scenario_run(slots, scenario, topk, schedule, seed)
    p = progress(run, token)
    steps, n, shown = run.steps, run.slots, p.shown
    img = np.ones((n, len(steps), 3))
    img[:, :] = FUTURE
    for j, st in enumerate(steps[:shown]):
        for s, c in enumerate(st.slots):
            img[s, j] = tint(cell_role(c), 0.0 if s in st.touched else IDLE_TINT)
    # normal mode: fixed margins (the grid's): constrained layout costs 100s of ms
    with lab_figure(6.0, look=LOOK, fixed=True) as fig:
        ax, ev = fig.subplots(2, 1, sharex=True, gridspec_kw={
            **GRID, "height_ratios": lay.height_ratios})
        axes_pt = fig.get_figwidth() * 72 * lay.map_width
        cell_pt = axes_pt / len(steps)
        ax.imshow(img, aspect="auto", extent=(-0.5, len(steps) - 0.5, n - 0.5, -0.5))
        ax.grid(False)
        if cell_pt * fig.dpi / 72 >= 13:
            _ids(ax, steps[:shown], min(ID_PT, ID_FILL * cell_pt))
        pins = [(j, s) for j, st in enumerate(steps[:shown]) for s, c in enumerate(st.slots)
                if c.pinned]
        if pins:
            px, py = np.array(pins, float).T
            ax.plot(px + 0.32, py - 0.3, "s", ms=5, mfc=ROLE["pinned"], mec="black", mew=0.6)
        _windows(ax, run, shown, cell_pt)
        if shown < len(steps):
            ax.text((shown + len(steps) - 1) / 2, (n - 1) / 2, "steps to come", ha="center",
                    va="center", fontsize=10, color=ROLE["neutral"])
        if shown:
            ax.add_patch(Rectangle((p.current - 0.5, -0.5), 1, n, fill=False, lw=2.2,
                                   ec=ROLE["reference"], zorder=6, clip_on=False))
        ax.set_xlim(-0.5, len(steps) - 0.5)
        ax.set_ylim(n - 0.5, -0.5)
        ax.set_yticks(range(n))
        ax.set_ylabel(f"slot ({run.slot_bytes:,} B)")
        ax.tick_params(axis="x", bottom=False, labelbottom=False)
        where = where_words(run, p)
        ax.set_title(brief(ax, f"Slot map, {scenario}: {n} slots, top-{topk}; {where}",
                           f"{scenario}, {n} slots, top-{topk}: {where}"), pad=20)
        counts = _events(ev, run, shown, cell_pt, lay)
        ax.legend(handles=_legend(), loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  fontsize=FS, handlelength=1.4, borderaxespad=0.0)
        legible(ax)
        legible(ev)
    evicted = [w for st in steps[:shown] for *_, w in st.evicted]
    last = steps[p.current].slots if shown else ()
    metrics = {
        "scenario": scenario, "slots": n, "topk": topk, "steps": len(steps),
        "token": token, "steps_shown": shown, "complete": p.complete,
        "current_call": steps[p.current].call if shown else "",
        "windows": len(run.windows), "windows_shown": len(p.windows),
        "evictions": len(evicted), "wasted_evictions": sum(evicted),
        "failed_reads": counts["failed"],
        "resident": sum(c.state == "READY" for c in last),
        "pending_prefetch": sum(c.state == "READY" and c.origin in ("prefetch", "warm")
                                and not c.consumed for c in last),
        "pinned": sum(c.pinned for c in last),
        "inflight_after_any_step": sum(c.state == "INFLIGHT" for st in steps for c in st.slots),
    }
    return FigureResult(fig, metrics)


def _events(ax, run, shown: int, cell_pt: float, lay: SlotMapLayout) -> dict[str, int]:
    """Per step: evictions after use, wasted prefetches, reads that never completed."""
    steps = run.steps
    x = np.arange(shown)
    used = np.array([sum(not w for *_, w in st.evicted) for st in steps[:shown]])
    wasted = np.array([sum(w for *_, w in st.evicted) for st in steps[:shown]])
    failed = np.array([len(st.failed) for st in steps[:shown]])
    top = max(3, int((used + wasted).max(initial=0)), int(failed.max(initial=0)))
    if shown:
        _bars(ax, x - 0.2, used, 0, ROLE["neutral"])
        _bars(ax, x - 0.2, wasted, used, ROLE["waste"])
        _bars(ax, x + 0.2, failed, 0, ROLE["inflight"])
    for j, st in enumerate(steps[:shown]):
        if st.cut_before:
            ax.axvline(j - 0.5, color=ROLE["miss"], lw=1.6)
            ax.text(j - 0.4, top * 1.15, "✂ shard cut", color=ROLE["miss"], fontsize=FS,
                    va="top", ha="left", fontweight="bold")
    if shown < len(steps):
        ax.axvspan(shown - 0.5, len(steps) - 0.5, color=FUTURE, lw=0, zorder=0)
    ax.set_ylim(0, top * 1.2)
    ax.set_yticks(range(0, top + 1, max(1, (top + 2) // 3)) if lay.event_ticks == "spaced"
                  else (0, top))
    ax.set_ylabel("slots")
    ax.set_title("What each step threw away or could not read", fontsize=10)
    ax.legend(handles=_event_handles(), loc="upper left", bbox_to_anchor=(1.01, 1.15),
              fontsize=FS, borderaxespad=0.0)
    _groups(ax, run, cell_pt, lay)
    return {"failed": int(failed.sum())}


def _bars(ax, x: np.ndarray, height: np.ndarray, bottom, colour: str, width: float = 0.4) -> None:
    """Bars as one collection (the non-empty ones): ax.bar makes and autoscales a Rectangle
    per step, ~1 ms each."""
    keep = height > 0
    if not keep.any():
        return
    x0 = x[keep] - width / 2
    y0 = np.broadcast_to(bottom, height.shape)[keep].astype(float)
    y1 = y0 + height[keep]
    verts = np.stack([np.column_stack(c) for c in
                      ((x0, y0), (x0 + width, y0), (x0 + width, y1), (x0, y1))], axis=1)
    ax.add_collection(PolyCollection(verts, facecolors=colour, edgecolors="none", lw=0),
                      autolim=False)


@functools.cache
def _glyph(text: str) -> Path:
    """The marker path of $\\mathrm{text}$, centred and scaled as matplotlib does for a mathtext
    marker, made once per text: parsing the mathtext for every marker artist costs ~3 ms."""
    path = TextPath((0, 0), f"$\\mathrm{{{text}}}$")
    box = path.get_extents()
    size = max(box.width, box.height)
    return (Affine2D().translate(-box.x0 - box.width / 2, -box.y0 - box.height / 2)
            .scale(1 / size).transform_path(path))


def _event_handles() -> list:
    return [Patch(color=ROLE["neutral"], label="evicted after use"),
            Patch(color=ROLE["waste"], label="evicted unused:\na wasted prefetch"),
            Patch(color=ROLE["inflight"], label="read that never\ncompleted")]


def _ids(ax, steps, ms: float) -> None:
    """Expert ids in the cells, one marker artist per (id, colour): thousands of Text artists
    would take seconds to lay out."""
    where: dict[tuple[int, str], list[tuple[int, int]]] = {}
    for j, st in enumerate(steps):
        for s, c in enumerate(st.slots):
            if c.state == "READY":
                dark = s in st.touched and c.origin in ("demand", "demand_batch")
                where.setdefault((c.expert, "white" if dark else "black"), []).append((j, s))
    for (e, color), xy in sorted(where.items()):
        x, y = np.array(xy, float).T
        ax.plot(x, y, ls="none", marker=_glyph(str(e)), ms=ms * (0.75 if e < 10 else 1),
                mec="none", mfc=color, mew=0)


def _windows(ax, run, shown: int, cell_pt: float) -> None:
    starts = [w.first - 0.5 for w in run.windows[1:] if w.first < shown]
    ax.vlines(starts, -0.5, run.slots - 0.5, color=ROLE["reference"], lw=1.0, ls=(0, (3, 2)))
    for w in run.windows:
        if (w.last - w.first + 1) * cell_pt >= WINDOW_LABEL_PT and w.first < shown:
            ax.text((w.first + w.last) / 2, -0.6, f"w{w.index}", ha="center", va="bottom",
                    fontsize=FS, color=ROLE["annotation"])


def _groups(ax, run, cell_pt: float, lay: SlotMapLayout) -> None:
    """Step letters (P, G, W) under each column and group names (probe, t1, c2) under those
    (lay.rows_in: at fractions of the panel's height, or at offsets in points)."""
    def below(d: float):  # (transform, y) of a row d under the panel
        if lay.rows_in == "points":
            return ax.get_xaxis_transform() + ScaledTranslation(0, -d / 72,
                                                                ax.figure.dpi_scale_trans), 0
        return ax.get_xaxis_transform(), -d
    (letters, letter_y), (names, name_y) = (below(d) for d in lay.rows_below)
    for kind, letter in KIND_LETTER.items():
        xs = [st.index for st in run.steps if st.kind == kind]
        if xs:  # one marker artist per letter: fifty tick labels cost ~100 ms
            ax.plot(xs, [letter_y] * len(xs), ls="none",
                    marker=_glyph(letter), ms=6.5, mew=0, mfc=ROLE["annotation"],
                    transform=letters, clip_on=False)
    spans: dict[str, list[int]] = {}
    for st in run.steps:
        spans.setdefault(st.group, []).append(st.index)
    for g, idx in spans.items():
        if len(idx) * cell_pt >= GROUP_PT_PER_CHAR * len(g) + GROUP_PT:
            ax.text((idx[0] + idx[-1]) / 2, name_y, g, transform=names,
                    ha="center", va="top", fontsize=FS, color=ROLE["annotation"])
    ax.tick_params(axis="x", bottom=False, labelbottom=False)
    ax.set_xlabel("step: P = a batch (get_many), G = gets in router order, W = warm + pin",
                  labelpad=lay.steps_pad)


def _legend() -> list:
    return [
        Patch(fc=ROLE["empty"], ec="#BBBBBB", label="empty"),
        Patch(fc=ROLE["miss"], label="loaded by a miss"),
        Patch(fc=ROLE["prefetch"], label="loaded ahead,\nnot yet used"),
        Patch(fc=ROLE["hit"], label="loaded ahead,\nthen used"),
        Patch(fc=tint("hit", IDLE_TINT), label="pale: not touched\nin this step"),
        Line2D([], [], marker="s", ls="none", mfc=ROLE["pinned"], mec="black", label="pinned"),
        Line2D([], [], color=ROLE["reference"], ls=(0, (3, 2)), lw=1.0,
               label="counters reset:\na new window"),
        Patch(fc="none", ec=ROLE["reference"], lw=2.0, label="the current step"),
    ]
