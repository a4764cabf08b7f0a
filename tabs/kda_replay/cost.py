"""Figure: the per-position byte ratio is not the memory saving.

Left: snapshot ÷ replay bytes held for a whole verify step (the committed state, γ + 1
positions, the short-conv window) against γ, beside the per-position ratio and the ceiling
1 + γ that no per-position ratio can lift. Right: the per-position ratio against the state
size, without and with the conv row both schemes keep. One convention throughout
(core.experiments.kda_replay).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import ScaledTranslation

from core.dims import K3
from core.experiments.kda_replay import k3_bytes, toy_bytes
from core.speculative import held_saving
from tabs.axes import plain_log
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.kda_replay.common import CONVENTION, DRAFTS, k3_label, toy_label
from tabs.palette import ROLE

WIDTHS = np.array([8, 16, 32, 64, 128, 256])
SAME_LINE = 0.6  # presenting: lines closer than this (log2) at γ's end share one name
# projector: the lines named beside them (_label_lines), so the left legend hidden and the
# right panel's two points keyed under the panels
LOOK = Projector(words={"S ÷ record (k, v, g, β)": "", "(S + conv row) ÷ (record + conv row)": ""},
                 legends=("hide", "below"))


@dataclass(frozen=True, kw_only=True)
class CostLayout:
    lines_named: bool  # each line named beside it (the legends hidden or keyed below, LOOK)
    held_value: str  # the chosen γ's saving: "by its point", or a dot with the value at the
    # γ line's "foot" (clear of the lines' names at the right end)


COST = Arrangement(normal=CostLayout(lines_named=False, held_value="by its point"),
                   projector=CostLayout(lines_named=True, held_value="foot"))


def _state_over_record(b) -> float:
    return b.state / b.raw


def _label_lines(ax, x: float, items: tuple[tuple[float, str, str, str], ...]) -> None:
    """Each line named at x (y, text, colour, "above" or "below" the line)."""
    for y, text, color, side in items:
        above = side == "above"
        ax.annotate(text, (x, y), xytext=(0, 3 if above else -6), textcoords="offset points",
                    ha="right", va="bottom" if above else "top", color=color)


def _saving(left, draft_len: int, k3, toy, toy_name: str, lay: CostLayout
            ) -> dict[str, float]:
    ceiling = DRAFTS + 1.0
    k3_held = np.array([held_saving(k3, int(g)) for g in DRAFTS])
    toy_held = np.array([held_saving(toy, int(g)) for g in DRAFTS])
    per_pos = _state_over_record(k3)
    left.plot(DRAFTS, np.full(len(DRAFTS), per_pos), "--", color=ROLE["snapshot"],
              label=f"per position, {k3_label()}: S ÷ record = {per_pos:.1f}×")
    left.plot(DRAFTS, ceiling, "-", color=ROLE["reference"], lw=1.0,
              label="ceiling 1 + γ: one state vs 1 + γ states")
    left.plot(DRAFTS, k3_held, "-", color=ROLE["replay"], lw=2.2,
              label=f"bytes held, {k3_label()}")
    left.plot(DRAFTS, toy_held, ":", color=ROLE["replay"], lw=2.0,
              label=f"bytes held, {toy_name}")
    i = int(np.flatnonzero(DRAFTS == draft_len)[0])
    left.axvline(draft_len, color=ROLE["annotation"], lw=0.8)
    lo, hi = 1.0, per_pos * 2.5
    left.set_yscale("log", base=2)
    left.set_ylim(lo, hi)
    plain_log(left.yaxis, lo, hi, base=2)
    left.set_xlim(DRAFTS[0], DRAFTS[-1])
    left.xaxis.set_major_locator(MaxNLocator(integer=True))  # γ counts drafts
    left.set_xlabel("draft length γ")
    left.set_ylabel("snapshot ÷ replay")
    left.set_title(brief(left, "Memory saved: whole bill vs per position",
                         "Whole bill vs per position"), loc="left")
    left.legend(loc="lower right", fontsize=7.5)
    if lay.held_value == "by its point":
        left.annotate(f"{k3_held[i]:.1f}×", (draft_len, k3_held[i]), xytext=(-30, 6),
                      textcoords="offset points", fontsize=8.5, color=ROLE["replay"])
    else:
        left.plot([draft_len], [k3_held[i]], "o", color=ROLE["replay"], ms=6)
        right_half = draft_len > (DRAFTS[0] + DRAFTS[-1]) / 2
        left.text(draft_len, 0.03, f"K3: {k3_held[i]:.1f}×", ha="right" if right_half else "left",
                  va="bottom", color=ROLE["replay"],
                  transform=left.get_xaxis_transform() + ScaledTranslation(
                      -4 / 72 if right_half else 4 / 72, 0, left.figure.dpi_scale_trans))
    if lay.lines_named:  # where they end
        held_lines = ((k3_held[-1], "held, K3", ROLE["replay"], "below"),
                      (toy_held[-1], "held, toy", ROLE["replay"], "below"))
        if abs(np.log2(k3_held[-1] / toy_held[-1])) < SAME_LINE:  # one name for both lines
            same = abs(k3_held[-1] / toy_held[-1] - 1) < 0.005
            held_lines = ((min(k3_held[-1], toy_held[-1]),
                           "held, K3 = toy" if same else "held, K3 and toy", ROLE["replay"],
                           "below"),)
        _label_lines(left, DRAFTS[-1], (
            (per_pos, f"per position {per_pos:.1f}×", ROLE["snapshot"], "above"),
            (ceiling[-1], "ceiling 1 + γ", ROLE["reference"], "above"), *held_lines))
    return {"k3_held_saving": float(k3_held[i]), "toy_held_saving": float(toy_held[i]),
            "ceiling": float(ceiling[i])}


def _ratio(right, k3, toy, dk: int, dv: int, toy_name: str, lay: CostLayout) -> None:
    d2 = WIDTHS.astype(float) ** 2
    bare = [_state_over_record(k3_bytes(int(w), int(w))) for w in WIDTHS]
    conv = [k3_bytes(int(w), int(w)).per_position_ratio for w in WIDTHS]
    right.plot(d2, bare, "s-", color=ROLE["snapshot"], label="S ÷ record (k, v, g, β)")
    right.plot(d2, conv, "o--", color=ROLE["replay"],
               label="(S + conv row) ÷ (record + conv row)")
    points = []
    for b, marker, name, dd in ((toy, "D", toy_name, dk * dv),
                                (k3, "*", k3_label(), K3.kda.dk * K3.kda.dv)):
        r0, r1 = _state_over_record(b), b.per_position_ratio
        color = ROLE["accepted"] if marker == "D" else ROLE["reference"]
        points += right.plot([dd, dd], [r1, r0], marker, color=color,
                             ms=8 if marker == "D" else 12,
                             label=brief(right, f"{name}: {r0:.1f}× / {r1:.1f}×", name))
    right.set_xscale("log", base=2)
    right.set_yscale("log", base=2)
    lo, hi = min(conv + [toy.per_position_ratio]) / 1.4, max(bare) * 1.4
    right.set_xlim(d2[0] / 1.6, d2[-1] * 1.6)
    right.set_ylim(lo, hi)
    plain_log(right.xaxis, d2[0], d2[-1], base=2, every=2)
    plain_log(right.yaxis, lo, hi, base=2)
    right.set_xlabel(brief(right, f"d_k · d_v ({CONVENTION})", "d_k · d_v"), fontsize=8.5)
    right.set_ylabel(brief(right, "snapshot ÷ replay, per position", "snapshot ÷ replay"))
    right.set_title(brief(right, "Per position the ratio grows with the state",
                          "Per position vs state size"), loc="left")
    # a projector: the toy and K3 keyed below (LOOK): wherever the toy sits, no name of it
    # lands on another
    right.legend(loc="upper left", fontsize=7.5)
    if lay.lines_named:  # S above its line, the conv row below
        mid = len(WIDTHS) // 2
        right.annotate("S ÷ record", (d2[mid], bare[mid]), xytext=(-6, 6),
                       textcoords="offset points", ha="right", va="bottom",
                       color=ROLE["snapshot"])
        right.annotate("+ conv row", (d2[mid], conv[mid]), xytext=(6, -6),
                       textcoords="offset points", ha="left", va="top", color=ROLE["replay"])


@arranged_by(COST)
def kda_replay_cost(draft_len: int, heads: int, dk: int, dv: int, *,
                    lay: CostLayout) -> FigureResult:
    toy, k3 = toy_bytes(heads, dk, dv), k3_bytes()
    name = toy_label(heads, dk, dv)
    with lab_figure(4.0, look=LOOK) as fig:
        left, right = fig.subplots(1, 2)
        held = _saving(left, draft_len, k3, toy, name, lay)
        _ratio(right, k3, toy, dk, dv, name, lay)
    metrics = {
        "draft_len": draft_len,
        "k3_state_over_record": _state_over_record(k3),
        "k3_per_position_with_conv": k3.per_position_ratio,
        "toy_state_over_record": _state_over_record(toy),
        "toy_per_position_with_conv": toy.per_position_ratio,
        **held,
    }
    return FigureResult(fig, metrics)
