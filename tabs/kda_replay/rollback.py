"""Figure: the rollback cost explorer at K3 scale, bytes held vs γ and moved vs acceptance.

Held counts the whole bill of every KDA layer (committed state, γ + 1 positions, the short-conv
window); moved is the expected bytes written plus read per verify step, one layer, under the
per-token acceptance model of core.speculative.rollback. One convention
(core.experiments.kda_replay).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.ticker import MaxNLocator

from core.dims import K3
from core.experiments.kda_replay import k3_bytes
from core.speculative import replay_ledger, snapshot_ledger
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.kda_replay.common import CONVENTION, DRAFTS, k3_label
from tabs.palette import ROLE
from tabs.units import MIB

RATES = np.linspace(0.0, 1.0, 41)
LOOK = Projector(legends="hide")  # presenting: each line named beside it (_name_line) instead


@dataclass(frozen=True, kw_only=True)
class RollbackLayout:
    lines_named: bool  # each line named just above it (the legends hidden, LOOK)
    floor_line: bool  # the committed state's own line (on a projector, too close to replay's
    # line to name)


ROLLBACK = Arrangement(normal=RollbackLayout(lines_named=False, floor_line=True),
                       projector=RollbackLayout(lines_named=True, floor_line=False))


def _name_line(ax, x: float, y: float, text: str, color: str, ha: str) -> None:
    """A line's name just above it at (x, y), in its colour."""
    ax.annotate(text, (x, y), xytext=(0, 4), textcoords="offset points", ha=ha, va="bottom",
                color=color)


def _held(ax, draft_len: int, b, lay: RollbackLayout) -> tuple[float, float]:
    s = np.array([snapshot_ledger(b, int(g), 1.0).held for g in DRAFTS]) * K3.n_kda / MIB
    r = np.array([replay_ledger(b, int(g), 1.0).held for g in DRAFTS]) * K3.n_kda / MIB
    ax.plot(DRAFTS, s, "-", color=ROLE["snapshot"], label="snapshot: 1 + γ states")
    ax.plot(DRAFTS, r, "-", color=ROLE["replay"], label="replay: 1 state + γ + 1 records")
    floor = b.state * K3.n_kda / MIB
    if lay.floor_line:
        ax.axhline(floor, color=ROLE["annotation"], lw=0.8, ls=":",
                   label=f"the committed state alone: {floor:,.0f} MiB")
    i = int(np.flatnonzero(DRAFTS == draft_len)[0])
    ax.axvline(draft_len, color=ROLE["annotation"], lw=0.8)
    ax.annotate(f"{s[i]:,.0f} vs {r[i]:,.0f} MiB", (draft_len, (s[i] + r[i]) / 2),
                xytext=(5, 0), textcoords="offset points", fontsize=8.5, va="center")
    ax.set_ylim(0, s[-1] * 1.1)
    ax.set_xlim(DRAFTS[0], DRAFTS[-1])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # γ counts drafts
    ax.set_xlabel("draft length γ")
    ax.set_ylabel(brief(ax, f"MiB held, all {K3.n_kda} KDA layers",
                        f"MiB held, {K3.n_kda} layers"))
    ax.set_title(brief(ax, f"Held while verifying, {k3_label()}", "Held while verifying, K3"),
                 loc="left")
    ax.legend(loc="upper left", fontsize=7.5)
    if lay.lines_named:
        mid = len(DRAFTS) // 2
        _name_line(ax, DRAFTS[mid], s[mid], "snapshot", ROLE["snapshot"], "right")
        _name_line(ax, DRAFTS[-1], r[-1], "replay", ROLE["replay"], "right")
    return float(s[i]), float(r[i])


@arranged_by(ROLLBACK)
def kda_replay_rollback(draft_len: int, *, lay: RollbackLayout) -> FigureResult:
    b = k3_bytes()
    with lab_figure(3.9, look=LOOK) as fig:
        held, moved = fig.subplots(1, 2)
        s_held, r_held = _held(held, draft_len, b, lay)
        snap = [snapshot_ledger(b, draft_len, float(a)) for a in RATES]
        rep = [replay_ledger(b, draft_len, float(a)) for a in RATES]
        moved.plot(RATES, [x.moved / MIB for x in snap], color=ROLE["snapshot"],
                   label="snapshot: γ + 1 states, + a restore copy if n < γ")
        moved.plot(RATES, [x.moved / MIB for x in rep], color=ROLE["replay"],
                   label="replay: records + S read and S written")
        moved.set_xlim(0, 1)
        moved.set_ylim(0, max(x.moved for x in snap) / MIB * 1.15)
        moved.set_xlabel(brief(moved, f"per-token acceptance rate a\n({CONVENTION})",
                               "per-token acceptance rate a"))
        moved.set_ylabel(brief(moved, "MiB written + read, one layer", "MiB moved, one layer"))
        moved.set_title(brief(moved, f"Moved per verify step, γ = {draft_len}",
                              f"Moved per step, γ = {draft_len}"), loc="left")
        moved.legend(loc="lower left", fontsize=7.5)
        if lay.lines_named:
            for x, role in ((snap[0], "snapshot"), (rep[0], "replay")):
                _name_line(moved, RATES[1], x.moved / MIB, role, ROLE[role], "left")
    s_half, r_half = snapshot_ledger(b, draft_len, 0.5), replay_ledger(b, draft_len, 0.5)
    metrics = {
        "k3_held_snapshot_mib_all_layers": s_held,
        "k3_held_replay_mib_all_layers": r_held,
        "k3_held_ratio": s_held / r_held,
        "k3_moved_snapshot_mib_a0.5": s_half.moved / MIB,
        "k3_moved_replay_mib_a0.5": r_half.moved / MIB,
        "replayed_positions_a0.5": r_half.replayed,
    }
    return FigureResult(fig, metrics)
