"""Figure: the ring's physical layout at the last verify step and how window() rows map onto it."""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.patches import FancyBboxPatch, Patch

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
from tabs.palette import ROLE
from tabs.replay_ring.common import KIND_COLOUR, KIND_LABEL, shown_steps
from tabs.replay_ring.timeline import SHORT_LABEL

SLOT_Y, ROW_Y, W, HGT = 2.0, 0.0, 0.84, 0.62
PRESENT_MAX_BOX_TEXT = 16  # presenting: above this many slots the boxes are too narrow to label
PRESENT_STARTS = 4  # presenting: the last few start pointers only
# presenting: shorter words, the legend below the drawing
LOOK = Projector(words={**{KIND_LABEL[k]: SHORT_LABEL[k] for k in SlotKind
                           if KIND_LABEL[k] != SHORT_LABEL[k]},
                        "physical\nslot": "slot", "export\nrow": "row",
                        "window(): committed": "committed", "window(tentative=True)": "tentative"},
                 legends="below")


@dataclass(frozen=True, kw_only=True)
class RingLayout:
    box_text_max: int | None  # slot boxes labelled up to this many slots; None: always
    note_x: float  # the explanation's left edge, and the view's left limit
    right_pad: float  # the view's right limit past max(L, 8) slots
    below_rows: float  # the view's room below the export rows, for the explanation


# a projector: a long ring's boxes are too narrow to label; the shorter explanation needs less
# room left of and below the drawing, so the ring fills more of it
RING = Arrangement(
    normal=RingLayout(box_text_max=None, note_x=-2.2, right_pad=0.2, below_rows=2.05),
    projector=RingLayout(box_text_max=PRESENT_MAX_BOX_TEXT, note_x=-1.2, right_pad=-0.2,
                         below_rows=1.5))


def _box(ax, x: float, y: float, face: str, text: str | None, dashed: bool = False) -> None:
    ax.add_patch(FancyBboxPatch((x - W / 2, y - HGT / 2), W, HGT, boxstyle="round,pad=0.02",
                                facecolor=face, edgecolor=ROLE["annotation"], lw=0.8,
                                ls="--" if dashed else "-"))
    if text is None:
        return
    dark = face in (ROLE["accepted"], ROLE["rejected"])
    ax.text(x, y, text, ha="center", va="center", fontsize=9, color="white" if dark else "black")


def _wrap_arrow(ax, L: int) -> None:
    top = SLOT_Y + 0.85
    xs = [L - 1 + W / 2, L - 0.35, L - 0.35, -0.65, -0.65]
    ys = [SLOT_Y, SLOT_Y, top, top, SLOT_Y]
    ax.plot(xs, ys, color=ROLE["annotation"], lw=0.9)
    ax.annotate("", xy=(-W / 2, SLOT_Y), xytext=(-0.65, SLOT_Y),
                arrowprops={"arrowstyle": "-|>", "color": ROLE["annotation"], "lw": 0.9})
    shorten(ax.text((L - 1) / 2, top + 0.08, f"wrap: after slot {L - 1} comes slot 0",
                    ha="center", va="bottom", fontsize=9, color=ROLE["annotation"]),
            f"wrap: slot {L - 1} → slot 0")


@arranged_by(RING)
def ring_layout(capacity: int, draft_len: int, accept_rate: float, steps: int,
                seed: int, step: int, *, lay: RingLayout) -> FigureResult:
    s = session(capacity, draft_len, accept_rate, steps, seed)
    k = shown_steps(step, len(s.steps))[0]
    last, ring = s.steps[k - 1], s.layouts[k - 1]  # the ring at step k, as recorded in the run
    L = capacity
    rows = [*ring.committed_slots, *ring.tentative_slots]  # push order: row i -> physical slot
    wraps = any(b < a for a, b in zip(rows, rows[1:], strict=False))
    boxed = lay.box_text_max is None or L <= lay.box_text_max
    every = 1 if boxed else 4  # presenting a long ring: every 4th slot number
    with lab_figure(4.2, look=LOOK) as fig:
        ax = fig.subplots()
        ax.axis("off")
        fs = 8 if L > 16 else 9
        for slot in range(L):
            kind, tok = last.slot_kind[slot], last.slot_token[slot]
            _box(ax, slot, SLOT_Y, KIND_COLOUR[kind],
                 None if not boxed else "·" if kind == SlotKind.EMPTY else str(tok))
            if slot % every == 0:
                ax.text(slot, SLOT_Y - HGT / 2 - 0.08, str(slot), ha="center", va="top",
                        fontsize=fs, color=ROLE["annotation"])
        ax.annotate("start", xy=(ring.start, SLOT_Y + HGT / 2), xytext=(ring.start, SLOT_Y + 0.56),
                    ha="center", va="bottom", fontsize=9, fontweight="bold",
                    arrowprops={"arrowstyle": "-|>", "color": ROLE["annotation"], "lw": 1.2})
        _wrap_arrow(ax, L)
        for i, slot in enumerate(rows):
            tentative = i >= ring.num_committed
            label = f"{i - ring.num_committed if tentative else i}"
            _box(ax, i, ROW_Y, KIND_COLOUR[last.slot_kind[slot]], label if boxed else None,
                 dashed=tentative)
            ax.plot([i, slot], [ROW_Y + HGT / 2, SLOT_Y - HGT / 2 - 0.42], color=ROLE["neutral"],
                    lw=0.8, zorder=0)
        ax.text(-0.9, SLOT_Y, "physical\nslot", ha="right", va="center", fontsize=9)
        ax.text(-0.9, ROW_Y, "export\nrow", ha="right", va="center", fontsize=9)
        c, t = ring.num_committed, ring.num_tentative
        if c:
            ax.text((c - 1) / 2, ROW_Y - 0.5, "window(): committed", ha="center", va="top",
                    fontsize=9)
        ax.text(c + (t - 1) / 2, ROW_Y - 0.5, "window(tentative=True)", ha="center", va="top",
                fontsize=9)
        starts = [0] + [r.start for r in s.steps[:k] if r.flushed]
        asked = f" (asked for {step})" if step > k else ""
        # presenting: the long explanation is the lesson's; here the rule and the pointer, in
        # a drawing with less room round it
        chain = ("… → " if len(starts) > PRESENT_STARTS else "") + " → ".join(
            map(str, starts[-PRESENT_STARTS:]))
        shorten(ax.text(lay.note_x, ROW_Y - 1.0,
                        f"Slot boxes show the token position they hold. Row i is the i-th push, "
                        f"at slot (start + i) mod L = ({ring.start} + i) mod {L}"
                        f"{': this window wraps.' if wraps else ': no wrap at this step.'}\n"
                        f"Start pointer, then after each flush (+ flushed count, mod L): "
                        f"{' → '.join(map(str, starts))}", ha="left", va="top", fontsize=9,
                        linespacing=1.5),
                f"row i → slot ({ring.start} + i) mod {L}{' (wraps)' if wraps else ''}; "
                f"start: {chain}")
        ax.set_xlim(lay.note_x, max(L, 8) + lay.right_pad)
        ax.set_ylim(ROW_Y - lay.below_rows, SLOT_Y + 1.15)
        ax.set_title(brief(ax, f"Ring layout at verify step {k} of {len(s.steps)}, after the "
                           f"pushes: commit({last.n_committed}) keeps {last.n_committed} of "
                           f"{t}, rollback() drops the rest{asked}",
                           f"Step {k} of {len(s.steps)}{asked}: commit({last.n_committed}) "
                           f"keeps {last.n_committed} of {t}, rollback() drops the rest"),
                     loc="left")
        kinds = (SlotKind.COMMITTED, SlotKind.ACCEPTED, SlotKind.ROLLED_BACK, SlotKind.EMPTY)
        handles = [Patch(color=KIND_COLOUR[k], label=KIND_LABEL[k]) for k in kinds]
        ax.legend(handles=handles, loc="lower right", ncols=4, fontsize=9)
    metrics = {
        "step": k, "asked_step": step, "verify_steps": len(s.steps),
        "complete": k == len(s.steps),
        "start_pointer": ring.start,
        "window_rows_committed": c,
        "window_rows_tentative": t,
        "accepted_last_step": last.n_accepted,
        "committed_last_step": last.n_committed,
        "window_wraps": wraps,
        "committed_slots": ",".join(map(str, ring.committed_slots)),
        "tentative_slots": ",".join(map(str, ring.tentative_slots)),
        "flushes": len(starts) - 1,
    }
    return FigureResult(fig, metrics)
