"""Figure: the slot map over time: state and origin per slot, expert ids, pins, evictions, waste."""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from tabs.expert_cache.common import cell_role, scenario_run, tint
from tabs.figure import FigureResult, lab_figure
from tabs.palette import ROLE

IDLE_TINT = 0.55  # slots not touched in a step are drawn lighter
KIND_LETTER = {"prefetch": "P", "consume": "G", "warm": "W"}
MARGINS = {"left": 0.075, "right": 0.815, "top": 0.905, "bottom": 0.135}
AXES_PX = 740  # the plot's width in pixels at 10 in and 100 dpi


def cache_slot_map(slots: int, scenario: str, topk: int, schedule: int, seed: int) -> FigureResult:
    run = scenario_run(slots, scenario, topk, schedule, seed)
    steps, n = run.steps, run.slots
    failures = any(st.failed for st in steps)
    rows = n + failures  # an extra row counts reads that could not complete
    img = np.ones((rows, len(steps), 3))
    for j, st in enumerate(steps):
        for s, c in enumerate(st.slots):
            img[s, j] = tint(cell_role(c), 0.0 if s in st.touched else IDLE_TINT)
    cell_px = AXES_PX / len(steps)
    with lab_figure(4.9) as fig:
        fig.set_layout_engine("none")  # fixed margins: constrained layout costs 100s of ms here
        ax = fig.subplots(gridspec_kw=MARGINS)
        ax.imshow(img, aspect="auto", extent=(-0.5, len(steps) - 0.5, rows - 0.5, -0.5))
        if failures:
            ax.axhline(n - 0.5, color=ROLE["annotation"], lw=0.8)
        ax.grid(False)
        if cell_px >= 13:
            _ids(ax, steps, min(8.0, 0.45 * cell_px))
        pins = [(j, s) for j, st in enumerate(steps) for s, c in enumerate(st.slots) if c.pinned]
        if pins:
            px, py = np.array(pins, float).T
            ax.plot(px + 0.32, py - 0.3, "s", ms=4.5, mfc=ROLE["pinned"], mec="black", mew=0.6)
        _evictions(ax, steps)
        for j, st in enumerate(steps):
            if st.failed:
                ax.add_patch(Rectangle((j - 0.5, n - 0.5), 1, 1, fc=tint("inflight", 0.35)))
                mark = f"✗{len(st.failed)}" if cell_px >= 20 else str(len(st.failed))
                ax.text(j, n, mark, ha="center", va="center", fontsize=7)
            if st.cut_before:
                ax.axvline(j - 0.5, color=ROLE["miss"], lw=1.6)
                ax.text(j - 0.4, n - 0.6, "✂ shard cut here", color=ROLE["miss"], fontsize=8,
                        va="bottom", ha="left", rotation=90, fontweight="bold")
        _windows(ax, run)
        ax.set_xlim(-0.5, len(steps) - 0.5)
        ax.set_ylim(rows - 0.5, -0.5)
        ax.set_yticks(range(rows), [str(s) for s in range(n)] + ["failed"] * failures)
        ax.set_xticks([])
        _groups(ax, run)
        ax.set_ylabel(f"slot ({run.slot_bytes:,} B each)")
        ax.set_xlabel("step: P = get_many batch, G = gets in router order, W = warm + pin"
                      "   (dashed line = reset_stats: a new counter window)",
                      labelpad=30)
        ax.set_title(f"Slot map, {scenario}: {n} slots, top-{topk}, "
                     f"{len(run.route)} tokens, seed {seed}", pad=16)
        ax.legend(handles=_legend(), loc="upper left", bbox_to_anchor=(1.005, 1.0),
                  fontsize=7.5, handlelength=1.4, borderaxespad=0.0)
    evicted = [w for st in steps for *_, w in st.evicted]
    last = steps[-1].slots
    metrics = {
        "scenario": scenario, "slots": n, "topk": topk, "steps": len(steps),
        "windows": len(run.windows), "evictions": len(evicted), "wasted_evictions": sum(evicted),
        "failed_reads": sum(len(st.failed) for st in steps),
        "final_resident": sum(c.state == "READY" for c in last),
        "final_pending_prefetch": sum(c.state == "READY" and c.origin in ("prefetch", "warm")
                                      and not c.consumed for c in last),
        "pinned": sum(c.pinned for c in last),
        "inflight_after_any_step": sum(c.state == "INFLIGHT" for st in steps for c in st.slots),
    }
    return FigureResult(fig, metrics)


def _evictions(ax, steps) -> None:
    """A bar where a slot changed owner; an unused prefetch thrown away is also hatched."""
    bars: dict[bool, list] = {False: [], True: []}
    for j, st in enumerate(steps):
        for s, _, wasted in st.evicted:
            bars[wasted].append([(j - 0.5, s - 0.45), (j - 0.5, s + 0.45)])
            if wasted and j:  # the prefetch as last seen, before it was thrown away
                ax.add_patch(Rectangle((j - 1.5, s - 0.5), 1, 1, fc="none", lw=0,
                                       hatch="////", ec=ROLE["waste"]))
    for wasted, segs in bars.items():
        if segs:
            ax.add_collection(LineCollection(
                segs, lw=3.2 if wasted else 1.8, capstyle="butt",
                colors=ROLE["waste"] if wasted else ROLE["reference"]))


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
        ax.plot(x, y, ls="none", marker=f"$\\mathrm{{{e}}}$", ms=ms * (0.75 if e < 10 else 1),
                mec="none", mfc=color, mew=0)


def _windows(ax, run) -> None:
    starts = [w.first - 0.5 for w in run.windows[1:]]
    ax.vlines(starts, -0.5, len(run.steps[0].slots) + 0.5, color=ROLE["reference"], lw=1.0,
              ls=(0, (3, 2)))
    for w in run.windows:
        width_px = (w.last - w.first + 1) * AXES_PX / len(run.steps)
        if width_px >= 16:
            ax.text((w.first + w.last) / 2, -0.55, f"w{w.index}", ha="center", va="bottom",
                    fontsize=7, color=ROLE["annotation"])


def _groups(ax, run) -> None:
    """Step letters (P, G, W) under each column and group names (probe, t1, c2) under those."""
    tr = ax.get_xaxis_transform()
    for kind, letter in KIND_LETTER.items():
        xs = [st.index for st in run.steps if st.kind == kind]
        if xs:  # one marker artist per letter: fifty tick labels cost ~100 ms
            ax.plot(xs, [-0.03] * len(xs), ls="none", marker=f"$\\mathrm{{{letter}}}$", ms=5.5,
                    mew=0, mfc=ROLE["annotation"], transform=tr, clip_on=False)
    spans: dict[str, list[int]] = {}
    for st in run.steps:
        spans.setdefault(st.group, []).append(st.index)
    px = AXES_PX / len(run.steps)
    for g, idx in spans.items():
        if len(idx) * px >= 7 * len(g):
            ax.text((idx[0] + idx[-1]) / 2, -0.06, g, transform=tr,
                    ha="center", va="top", fontsize=7, color=ROLE["annotation"])


def _legend() -> list:
    bar = {"marker": "|", "ls": "none", "ms": 11}
    return [
        Patch(fc=ROLE["empty"], ec="#BBBBBB", label="empty"),
        Patch(fc=ROLE["miss"], label="loaded by a demand miss"),
        Patch(fc=ROLE["prefetch"], label="loaded ahead, not yet used"),
        Patch(fc=ROLE["hit"], label="loaded ahead, then used"),
        Patch(fc=tint("hit", IDLE_TINT), label="pale: not touched this step"),
        Line2D([], [], marker="s", ls="none", mfc=ROLE["pinned"], mec="black", label="pinned"),
        Line2D([], [], color=ROLE["reference"], mew=1.8, **bar, label="eviction after use"),
        Patch(fc=ROLE["prefetch"], ec=ROLE["waste"], hatch="////", lw=0,
              label="unused prefetch, evicted\nat the orange bar (waste)"),
        Patch(fc=tint("inflight", 0.35), label="✗n: reads that never\ncompleted"),
    ]
