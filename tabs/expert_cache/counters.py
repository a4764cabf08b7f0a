"""Figure: the counters of every window, arranged so that the two ledgers visibly balance."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from core.experiments.expert_cache import scenario_run
from core.experts.scenarios import EXPERT_BYTES
from core.experts.scenarios.progress import progress
from tabs.expert_cache.common import FS, legible, tint
from tabs.expert_cache.slot_map import where_words
from tabs.figure import (
    Arrangement,
    FigureResult,
    Projector,
    arranged_by,
    brief,
    lab_figure,
    shorten,
)
from tabs.palette import ROLE

PENDING = tint("prefetch", 0.55)  # pale blue, as pending slots on the slot map
GRID = {"height_ratios": [1, 1, 0.8], "left": 0.065, "right": 0.69, "top": 0.9,
        "bottom": 0.1, "hspace": 0.42}
WORDS = {"res": "hits_resident (reuse)", "pre": "hits_prefetched (first use)",
         "miss": "misses (failed ones too)", "consumed": "out: consumed (hits_prefetched)",
         "a": "Gets: each is a resident hit, a prefetched hit or a miss",
         "b": "Loaded ahead (left bar) = consumed + wasted + pending (right bar)",
         "c": "Evictions, drops, reads that never completed", "a_y": "gets per window",
         "b_y": "experts per window", "c_y": "events per window"}
PRESENT_WORDS = {"res": "hits_resident", "pre": "hits_prefetched", "miss": "misses",
                 "consumed": "out: hits_prefetched",
                 "a": "Gets: resident hit, prefetched hit, miss",
                 "b": "Loaded ahead: in (left bar) = out (right bar)",
                 "c": "Evictions, drops, failed reads", "a_y": "gets", "b_y": "experts",
                 "c_y": "events"}
# Projector text: counter names without glosses, shorter titles
LOOK = Projector(words={WORDS[k]: PRESENT_WORDS[k] for k in WORDS})


@dataclass(frozen=True, kw_only=True)
class CountersLayout:
    y_bins: int  # ticks on each panel's count axis, at most
    legend_spacing: float  # between a legend's entries (font sizes)
    all_windows_to: int  # every window's tick labelled up to this many windows, else every other
    open_at: str  # "still open": "under" the last shown tick, or "over" the windows to come


# a projector: larger labels, so fewer ticks and tighter legends, and "still open" in the empty
# span of windows to come, not under the ticks
COUNTERS = Arrangement(
    normal=CountersLayout(y_bins=4, legend_spacing=0.5, all_windows_to=16, open_at="under"),
    projector=CountersLayout(y_bins=3, legend_spacing=0.2, all_windows_to=8, open_at="over"))


@arranged_by(COUNTERS)
def cache_counters(slots: int, scenario: str, topk: int, schedule: int, seed: int,
                   token: int, *, lay: CountersLayout) -> FigureResult:
    run = scenario_run(slots, scenario, topk, schedule, seed)
    p = progress(run, token)
    ws = p.windows  # the counters as they stand after the shown steps; later windows absent
    x = np.arange(len(ws))
    n_all = len(run.windows)

    st = [w.stats for w in ws]
    res = np.array([s.hits_resident for s in st])  # (W,) per window
    pre = np.array([s.hits_prefetched for s in st])
    miss = np.array([s.demand_misses for s in st])
    reads = np.array([s.prefetch_reads for s in st])
    warm = np.array([s.warm_reads for s in st])
    carried = np.array([s.carried_pending for s in st])
    wasted = np.array([s.prefetch_wasted for s in st])
    pending = np.array([s.prefetch_pending for s in st])
    ev = np.array([s.evictions for s in st])
    drops = np.array([s.drops for s in st])
    failed = np.array([s.failed_reads for s in st])
    honest = all(w.claims_only_published for w in ws)
    # normal mode: fixed margins (the grid's): constrained layout costs ~250 ms
    with lab_figure(7.0, look=LOOK, fixed=True) as fig:
        a, b, c = fig.subplots(3, 1, sharex=True, gridspec_kw=GRID)
        ha = _stack(a, x, 0.7, [(res, ROLE["hit"], None, WORDS["res"]),
                                (pre, ROLE["prefetch"], None, WORDS["pre"]),
                                (miss, ROLE["miss"], None, WORDS["miss"])])
        a.set_title(WORDS["a"])
        a.set_ylabel(WORDS["a_y"])
        w = 0.36
        hb = _stack(b, x - w / 2 - 0.02, w, [
            (reads, ROLE["prefetch"], None, "in: prefetch_reads"),
            (warm, ROLE["prefetch"], "xxx", "in: warm_reads"),
            (carried, PENDING, None, "in: carried_pending")])
        hb += _stack(b, x + w / 2 + 0.02, w, [
            (pre, ROLE["hit"], None, WORDS["consumed"]),
            (wasted, ROLE["waste"], None, "out: prefetch_wasted"),
            (pending, PENDING, "///", "out: prefetch_pending")])
        b.set_title(WORDS["b"])
        b.set_ylabel(WORDS["b_y"])
        hc = [h for off, part in ((-0.25, (ev, ROLE["neutral"], None, "evictions")),
                                  (0.0, (drops, ROLE["reference"], None, "drops")),
                                  (0.25, (failed, ROLE["inflight"], None, "failed_reads")))
              for h in _stack(c, x + off, 0.25, [part])]
        c.set_title(WORDS["c"])
        c.set_ylabel(WORDS["c_y"])
        check = "✓" if honest else "✗"
        # a projector: the check in the x label instead
        shorten(c.text(1.02, 0.3, f"{check} in every window:\n  bytes_read = {EXPERT_BYTES:,} B\n"
                       "  × loads that published;\n  a failed read claims 0 B",
                       transform=c.transAxes, ha="left", va="top", fontsize=FS), "")
        fig.suptitle(f"Counters, {scenario}: {where_words(run, p)}", x=0.065, ha="left",
                     fontsize=11, fontweight="bold")
        tops = ((res + pre + miss).max(initial=0),
                np.maximum(reads + warm + carried, pre + wasted + pending).max(initial=0),
                max(ev.max(initial=0), failed.max(initial=0), 1))
        for ax, top, handles in zip((a, b, c), tops, (ha, hb, hc), strict=True):
            ax.set_ylim(0, top * 1.2 + 1)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=lay.y_bins))
            ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.005, 1.05),
                      fontsize=FS, borderaxespad=0.0, labelspacing=lay.legend_spacing)
            if len(ws) < n_all:  # windows still to come: not drawn yet
                ax.axvspan(len(ws) - 0.5, n_all - 0.4, color=ROLE["empty"], lw=0, zorder=0)
            legible(ax)
        every = 1 if n_all <= lay.all_windows_to else 2
        c.set_xticks(np.arange(0, n_all, every), [f"w{i}" for i in range(0, n_all, every)])
        c.set_xlim(-0.6, n_all - 0.4)
        if not p.complete and ws:
            panel, x_open, y_open, kw = ((c, len(ws) - 1, -0.17, {"ha": "center"})
                                         if lay.open_at == "under" else
                                         (a, len(ws) - 0.4, 0.95, {}))
            shorten(panel.text(x_open, y_open, "▲ still open", va="top", fontsize=FS,
                               transform=panel.get_xaxis_transform(), color=ROLE["annotation"],
                               **kw), f"◀ w{len(ws) - 1} still open")
        # the x label clears a "still open" under the ticks (over them: matplotlib's pad)
        pad = (16 if not p.complete else 4) if lay.open_at == "under" else None
        c.set_xlabel(brief(c, f"counter window (the counters reset between windows); {slots} "
                           f"slots, top-{topk}",
                           f"window; {check} bytes_read = {EXPERT_BYTES:,} B × published loads"),
                     labelpad=pad)
    metrics = {
        "token": token, "steps_shown": p.shown, "complete": p.complete,
        "windows": len(ws), "hits_resident": int(res.sum()), "hits_prefetched": int(pre.sum()),
        "misses": int(miss.sum()), "prefetch_reads": int(reads.sum()),
        "warm_reads": int(warm.sum()),
        "prefetch_wasted": int(wasted.sum()), "prefetch_pending_end": int(pending[-1]) if ws else 0,
        "evictions": int(ev.sum()), "drops": int(drops.sum()), "failed_reads": int(failed.sum()),
        "bytes_read": sum(s.bytes_read for s in st),
        "bytes_match_published_loads": honest,
    }
    return FigureResult(fig, metrics)


def _stack(ax, x: np.ndarray, width: float, parts: list) -> list[Patch]:
    """Stacked bars, one collection per part (zero-height bars are not drawn); returns a legend
    handle each. NOTE: a PolyCollection, not ax.bar: ~100 Rectangle artists were a third of a
    redraw (issue 14)."""
    bottom, handles = np.zeros(len(x)), []
    for vals, color, hatch, label in parts:
        style = {"facecolor": color, "hatch": hatch, "linewidth": 0.4,
                 "edgecolor": "white" if hatch is None else ROLE["annotation"]}
        on = vals > 0
        x0, y0, y1 = x[on] - width / 2, bottom[on], bottom[on] + vals[on]
        boxes = np.stack([np.stack([x0, y0], 1), np.stack([x0 + width, y0], 1),
                          np.stack([x0 + width, y1], 1), np.stack([x0, y1], 1)], 1)
        ax.add_collection(PolyCollection(boxes, facecolors=color, edgecolors=style["edgecolor"],
                                         linewidths=0.4, hatch=hatch), autolim=False)
        handles.append(Patch(label=label, **style))
        bottom = bottom + vals
    return handles
