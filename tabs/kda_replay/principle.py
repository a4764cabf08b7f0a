"""Figure: the whole bill of one verify step (held, written, read) and what each scheme keeps.

A verify step runs a window of γ + 1 positions: the bonus token b the previous step emitted,
then γ drafts. n accepted drafts commit n + 1 positions. Bytes per layer and sequence under the
tab's convention (core.experiments.kda_replay), from core.speculative.rollback's outcomes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.patches import FancyBboxPatch, Patch

from core.errors import check_int
from core.experiments.kda_replay import toy_bytes
from core.speculative import replay_outcome, snapshot_outcome
from tabs.figure import (
    Arrangement,
    FigureResult,
    Projector,
    arranged_by,
    brief,
    lab_figure,
    shorten,
)
from tabs.kda_replay.common import CONVENTION, toy_label
from tabs.palette import ROLE
from tabs.units import KIB

PRESENT_COLUMNS = 7  # presenting: a window drawn in at most this many columns (b.. and "…")
PARTS = (  # bill component, colour role, legend label, its short form when presenting
    ("state", "snapshot", "whole states S", "states S"),
    ("raw", "replay", "raw records (k, v, g, β)", "raw records"),
    ("conv", "neutral", "short-conv window (same in both)", "conv window"),
)
GROUPS = ("held", "written", "read")
# A projector: the legend's short words; the groups' names on one line (no scheme names under
# the bars to make room for)
LOOK = Projector(words={**{lab: short for _, _, lab, short in PARTS},
                        **{f"\n{g}": g for g in GROUPS}})


@dataclass(frozen=True, kw_only=True)
class PrincipleLayout:
    headroom: float  # the bars' y axis top, as a multiple of the tallest bar
    max_columns: int | None  # the window sketch's columns at most (see _columns); None: all
    width_ratios: tuple[float, float]  # the bars' panel and the sketch's, side by side


# a projector: the bars' legend in headroom above them, the bars' labels need a wider panel,
# and a long window is drawn in fewer, larger columns
PRINCIPLE = Arrangement(
    normal=PrincipleLayout(headroom=1.3, max_columns=None, width_ratios=(1, 1.45)),
    projector=PrincipleLayout(headroom=2.0, max_columns=PRESENT_COLUMNS, width_ratios=(1.1, 1)))


def _bill(b, draft_len: int, n: int) -> dict[str, dict[str, tuple[float, float, float]]]:
    """scheme -> {part: (held, written, read)} in bytes, from the core ledgers' own terms."""
    w = draft_len + 1
    snap, rep = snapshot_outcome(b, draft_len, n), replay_outcome(b, draft_len, n)
    conv = (b.conv_window(w), w * b.conv_row, 0.0)
    out = {
        "snapshot": {"state": (snap.held - conv[0], snap.written - conv[1], snap.read),
                     "raw": (0.0, 0.0, 0.0), "conv": conv},
        "replay": {"state": (b.state, b.state, b.state),
                   "raw": (w * b.raw, w * b.raw, (n + 1) * b.raw), "conv": conv},
    }
    for scheme, led in (("snapshot", snap), ("replay", rep)):
        total = [sum(p[i] for p in out[scheme].values()) for i in range(3)]
        assert total == [led.held, led.written, led.read], scheme  # parts add up to the ledger
    return out


def _box(ax, x: float, y: float, text: str, face: str, edge: str, lw: float = 1.0) -> None:
    ax.add_patch(FancyBboxPatch((x - 0.4, y - 0.3), 0.8, 0.6, boxstyle="round,pad=0.02",
                                facecolor=face, edgecolor=edge, linewidth=lw))
    ax.text(x, y, text, ha="center", va="center", fontsize=8)


def _bars(ax, bill, heads: int, dk: int, dv: int, headroom: float) -> None:
    """Stacked bars, snapshot left of replay in each group. Presenting, the bars carry no
    scheme names (the x label says which is which) and the legend is short, in headroom."""
    groups = GROUPS
    x0 = np.arange(len(groups)) * 1.0
    width = 0.36
    top = 0.0
    for k, (scheme, dx) in enumerate((("snapshot", -0.2), ("replay", 0.2))):
        bottom = np.zeros(len(groups))
        for part, role, _, _ in PARTS:
            h = np.array(bill[scheme][part]) / KIB
            ax.bar(x0 + dx, h, width, bottom=bottom, color=ROLE[role],
                   alpha=0.85 if part != "conv" else 0.6, edgecolor="white", lw=0.6)
            bottom += h
        for xi, total in zip(x0 + dx, bottom, strict=True):
            value = ax.text(xi, total, f"{total:.1f}", ha="center", va="bottom", fontsize=8)
            if total >= 100:  # presenting: whole KiB over 100
                shorten(value, f"{total:.0f}")
            shorten(ax.text(xi, -0.02, "snap" if k == 0 else "replay", ha="center", va="top",
                            fontsize=7.5, transform=ax.get_xaxis_transform()), "")
        top = max(top, float(bottom.max()))
    ax.set_xticks(x0, [f"\n{g}" for g in groups])
    ax.tick_params(axis="x", length=0, labelsize=9.5)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylim(0, top * headroom)
    toy = toy_label(heads, dk, dv)
    ax.set_ylabel(brief(ax, f"KiB, one layer, {toy}", f"KiB, {toy}"))
    ax.set_xlabel(brief(ax, CONVENTION, "left: snapshot, right: replay"), fontsize=7.5,
                  color=ROLE["annotation"])
    ax.legend(handles=[Patch(color=ROLE[r], alpha=0.85, label=lab) for _, r, lab, _ in PARTS],
              loc="upper right", fontsize=7.5)


def _columns(w: int, accepted: int, most: int | None) -> list[int | None]:
    """The window's positions (1 = b) drawn as columns, at most `most` (None: all of them);
    a longer window keeps b, the first draft, the kept position, the first rejected one and
    the last, None (an ellipsis) standing for each run left out."""
    if most is None or w <= most:
        return list(range(1, w + 1))
    keep = sorted({1, 2, accepted + 1, accepted + 2, w} & set(range(1, w + 1)))
    out: list[int | None] = []
    for i in keep:
        if out and i - (out[-1] or 0) > 1:
            out.append(None)
        out.append(i)
    return out


def _sketch(sk, draft_len: int, accepted: int, snap_read: float, rep_read: float,
            max_columns: int | None) -> None:
    w = draft_len + 1
    names = ["b", *map(str, range(1, w))]
    cols = _columns(w, accepted, max_columns)
    sk.set_xlim(-0.6, max(len(cols), 5) + 0.6)
    sk.set_ylim(-1.05, 2.05)
    sk.axis("off")
    _box(sk, 0, 1.1, "S", "white", ROLE["reference"])
    _box(sk, 0, -0.1, "S", "white", ROLE["reference"], lw=2)
    for x, i in enumerate(cols, start=1):
        if i is None:  # positions left out (presenting a long window)
            for y in (1.1, -0.1):
                sk.text(x, y, "…", ha="center", va="center", fontsize=8)
            continue
        name = names[i - 1]
        ok = i <= accepted + 1
        edge = ROLE["accepted"] if ok else ROLE["rejected"]
        _box(sk, x, 1.1, f"S{name}", "#FBE3D2", edge, lw=2.5 if i == accepted + 1 else 1)
        _box(sk, x, -0.1, f"x{name}", "#D6E6F3", edge, lw=2 if ok else 1)
    kept = names[accepted]
    # a projector: the same two facts in fewer words; the edge colours are in the lesson
    restore = f"copy S{kept} into place: read {snap_read / KIB:.1f} KiB" if snap_read else \
        f"all accepted: S{kept} is already in place"
    short = f"copy S{kept}: read {snap_read / KIB:.1f} KiB" if snap_read else f"S{kept} in place"
    shorten(sk.text(-0.55, 1.72, f"snapshot keeps a state after every position; {restore}",
                    fontsize=8.5, color=ROLE["snapshot"]), f"snapshot: {short}")
    shorten(sk.text(-0.55, -0.78, f"replay keeps S and one record per position; replays "
                    f"b..{kept} from S: reads {rep_read / KIB:.2f} KiB", fontsize=8.5,
                    color=ROLE["replay"]),
            f"replay b..{kept} from S: read {rep_read / KIB:.2f} KiB")
    shorten(sk.text(-0.55, 0.5, "b = the bonus token the last step emitted; green edge: "
                    "commits, purple: rejected", fontsize=7.5, color=ROLE["annotation"]), "")


@arranged_by(PRINCIPLE)
def kda_replay_principle(
    draft_len: int, accepted: int, heads: int, dk: int, dv: int, *, lay: PrincipleLayout
) -> FigureResult:
    check_int("accepted", accepted, 0, draft_len)
    b = toy_bytes(heads, dk, dv)
    bill = _bill(b, draft_len, accepted)
    snap, rep = snapshot_outcome(b, draft_len, accepted), replay_outcome(b, draft_len, accepted)
    with lab_figure(4.1, look=LOOK) as fig:
        ax, sk = fig.subplots(1, 2, gridspec_kw={"width_ratios": lay.width_ratios})
        _bars(ax, bill, heads, dk, dv, lay.headroom)
        ax.set_title(brief(ax, f"One verify step, n = {accepted} of γ = {draft_len}",
                           f"One step, n = {accepted} of γ = {draft_len}"), loc="left")
        _sketch(sk, draft_len, accepted, snap.read, rep.read, lay.max_columns)
        sk.set_title(brief(sk, f"Window of γ + 1 = {draft_len + 1} positions: b, then "
                           f"{draft_len} drafts", f"Window: b, then γ = {draft_len} drafts"),
                     loc="left")
    metrics = {
        "window": draft_len + 1,
        "positions_replayed": int(rep.replayed),
        "state_bytes": b.state,
        "raw_bytes_per_position": b.raw,
        "conv_row_bytes": b.conv_row,
        "snapshot_bytes_held": snap.held,
        "replay_bytes_held": rep.held,
        "held_ratio": snap.held / rep.held,
        "snapshot_bytes_written": snap.written,
        "replay_bytes_written": rep.written,
        "snapshot_bytes_read": snap.read,
        "replay_bytes_read": rep.read,
    }
    return FigureResult(fig, metrics)
