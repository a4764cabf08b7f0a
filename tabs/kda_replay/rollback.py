"""Figure: the rollback cost explorer, bytes held and moved vs draft length and acceptance."""

from __future__ import annotations

import numpy as np

from core.spec.rollback import replay_ledger, snapshot_ledger
from tabs.axes import plain_log
from tabs.figure import FigureResult, lab_figure
from tabs.kda_replay.common import DRAFTS, K3, k3_cost, toy_cost
from tabs.palette import ROLE
from tabs.units import MIB

RATES = np.linspace(0.0, 1.0, 41)


def kda_replay_rollback(draft_len: int, heads: int, dk: int, dv: int) -> FigureResult:
    toy, k3 = toy_cost(heads, dk, dv, 1), k3_cost(1)
    with lab_figure(3.8) as fig:
        held, moved = fig.subplots(1, 2)
        plotted: list[float] = []
        for cost, scale, style, name in (
            (k3, K3.n_kda, "-", f"K3, {K3.n_kda} layers"),
            (toy, 1, ":", "toy, 1 layer"),
        ):
            s = [
                snapshot_ledger(cost.snapshot_per_step, int(g), 1.0).held * scale / MIB
                for g in DRAFTS
            ]
            r = [
                replay_ledger(cost.snapshot_per_step, cost.raw_per_step, int(g), 1.0).held
                * scale
                / MIB
                for g in DRAFTS
            ]
            plotted += s + r
            held.plot(DRAFTS, s, style, color=ROLE["snapshot"], label=f"snapshot ({name})")
            held.plot(DRAFTS, r, style, color=ROLE["replay"], label=f"replay ({name})")
        held.axvline(draft_len, color=ROLE["annotation"], lw=0.8)
        held.set_yscale("log")
        lo, hi = min(plotted) / 1.5, max(plotted) * 1.5
        held.set_ylim(lo, hi)
        plain_log(held.yaxis, lo, hi)
        held.set_xlim(DRAFTS[0], DRAFTS[-1])
        held.set_xlabel("draft length γ")
        held.set_ylabel("MiB held while verifying")
        held.set_title("Bytes held: 1 + γ states vs 1 state + γ records")
        held.legend(loc="center right")

        snap = [snapshot_ledger(k3.snapshot_per_step, draft_len, float(a)) for a in RATES]
        rep = [
            replay_ledger(k3.snapshot_per_step, k3.raw_per_step, draft_len, float(a)) for a in RATES
        ]
        moved.plot(RATES, [x.moved / MIB for x in snap], color=ROLE["snapshot"], label="snapshot")
        moved.plot(RATES, [x.moved / MIB for x in rep], color=ROLE["replay"], label="replay")
        moved.set_xlim(0, 1)
        moved.set_ylim(0, max(x.moved for x in snap) / MIB * 1.1)
        moved.set_xlabel("per-token acceptance rate a")
        moved.set_ylabel("MiB moved per verify step (one K3 layer)")
        moved.set_title(f"Bytes moved per verify step, γ = {draft_len}")
        moved.legend(loc="center right")
    s1, r1 = snap[-1], rep[-1]
    s_half = snapshot_ledger(k3.snapshot_per_step, draft_len, 0.5)
    r_half = replay_ledger(k3.snapshot_per_step, k3.raw_per_step, draft_len, 0.5)
    metrics = {
        "k3_held_snapshot_mib_all_layers": s1.held * K3.n_kda / MIB,
        "k3_held_replay_mib_all_layers": r1.held * K3.n_kda / MIB,
        "k3_moved_snapshot_mib_a0.5": s_half.moved / MIB,
        "k3_moved_replay_mib_a0.5": r_half.moved / MIB,
        "toy_held_snapshot_bytes": snapshot_ledger(toy.snapshot_per_step, draft_len, 1.0).held,
        "toy_held_replay_bytes": replay_ledger(
            toy.snapshot_per_step, toy.raw_per_step, draft_len, 1.0
        ).held,
    }
    return FigureResult(fig, metrics)
