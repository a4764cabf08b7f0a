"""Figure: what snapshot and replay store per draft step, and what each does on rollback."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import FancyBboxPatch, Patch

from core.errors import check_int
from core.spec.rollback import replay_outcome, snapshot_outcome
from tabs.figure import FigureResult, lab_figure
from tabs.kda_replay.common import toy_cost
from tabs.palette import ROLE
from tabs.units import KIB


def _box(ax, x: float, y: float, text: str, face: str, edge: str, lw: float = 1.0) -> None:
    ax.add_patch(
        FancyBboxPatch(
            (x - 0.4, y - 0.3),
            0.8,
            0.6,
            boxstyle="round,pad=0.02",
            facecolor=face,
            edgecolor=edge,
            linewidth=lw,
        )
    )
    ax.text(x, y, text, ha="center", va="center", fontsize=8)


def kda_replay_principle(
    draft_len: int, accepted: int, heads: int, dk: int, dv: int
) -> FigureResult:
    check_int("accepted", accepted, 0, draft_len)
    cost = toy_cost(heads, dk, dv, draft_len)
    steps = np.arange(1, draft_len + 1)
    with lab_figure(3.9) as fig:
        ax, sk = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.35]})
        w = 0.38
        keep = steps <= accepted
        for mask, alpha, hatch in ((keep, 1.0, None), (~keep, 0.35, "//")):
            ax.bar(
                steps[mask] - w / 2,
                np.full(mask.sum(), cost.snapshot_per_step / KIB),
                w,
                color=ROLE["snapshot"],
                alpha=alpha,
                hatch=hatch,
                edgecolor="white",
            )
            ax.bar(
                steps[mask] + w / 2,
                np.full(mask.sum(), cost.raw_per_step / KIB),
                w,
                color=ROLE["replay"],
                alpha=alpha,
                hatch=hatch,
                edgecolor="white",
            )
        ax.legend(
            handles=[
                Patch(
                    color=ROLE["snapshot"],
                    label=f"snapshot H·d_k·d_v·4 B = {cost.snapshot_per_step / KIB:.1f} KiB",
                ),
                Patch(
                    color=ROLE["replay"],
                    label=f"raw k, v, g, β = {cost.raw_per_step / KIB:.2f} KiB",
                ),
                Patch(
                    facecolor=ROLE["neutral"],
                    alpha=0.35,
                    hatch="//",
                    edgecolor=ROLE["annotation"],
                    label="rejected step: discarded on rollback",
                ),
            ],
            loc="upper left",
        )
        ax.set_xticks(steps)
        ax.set_xlim(0.4, draft_len + 0.6)
        ax.set_ylim(0, cost.snapshot_per_step / KIB * 1.45)
        ax.set_xlabel("draft step")
        ax.set_ylabel(f"KiB per step, one layer (H={heads}, {dk}×{dv})")
        ax.set_title(f"Stored per draft step: snapshot ÷ raw = {cost.ratio:.2f}×")

        sk.set_title(f"Rollback after n = {accepted} of γ = {draft_len} accepted")
        sk.set_xlim(-0.8, draft_len + 0.8)
        sk.set_ylim(-0.9, 2.0)
        sk.axis("off")
        sk.text(-0.75, 1.55, "snapshot", fontsize=9, fontweight="bold", color=ROLE["snapshot"])
        sk.text(-0.75, 0.35, "replay", fontsize=9, fontweight="bold", color=ROLE["replay"])
        _box(sk, 0, 1.1, "S₀", "white", ROLE["reference"])
        _box(sk, 0, -0.1, "S₀", "white", ROLE["reference"], lw=2 if accepted else 1)
        for i in steps:
            ok = i <= accepted
            edge = ROLE["accepted"] if ok else ROLE["rejected"]
            _box(sk, i, 1.1, f"S{i}", "#FBE3D2", edge, lw=2.5 if i == accepted else 1)
            _box(sk, i, -0.1, f"x{i}", "#D6E6F3", edge, lw=2 if ok else 1)
        snap = snapshot_outcome(cost.snapshot_per_step, draft_len, accepted)
        rep = replay_outcome(cost.snapshot_per_step, cost.raw_per_step, draft_len, accepted)
        sk.text(
            draft_len / 2,
            1.7,
            f"holds S₀ + {draft_len} copies = {snap.held / KIB:.1f} KiB; "
            + (
                f"restore S{accepted}: copy {snap.read / KIB:.1f} KiB"
                if snap.read
                else f"all accepted: keep S{draft_len}"
            ),
            ha="center",
            fontsize=8,
        )
        sk.text(
            draft_len / 2,
            -0.75,
            f"holds S₀ + {draft_len} records = {rep.held / KIB:.1f} KiB; "
            + (
                f"replay {accepted} steps: read S₀ + {accepted} records = {rep.read / KIB:.2f} KiB"
                if accepted
                else "nothing accepted: keep S₀"
            ),
            ha="center",
            fontsize=8,
        )
        sk.text(
            draft_len / 2,
            0.5,
            "edge: green = accepted, purple = rejected",
            ha="center",
            fontsize=7.5,
            color=ROLE["annotation"],
        )
    metrics = {
        "snapshot_bytes_per_step": cost.snapshot_per_step,
        "raw_bytes_per_step": cost.raw_per_step,
        "ratio_snapshot_over_raw": cost.ratio,
        "snapshot_bytes_held": snap.held,
        "replay_bytes_held": rep.held,
        "snapshot_bytes_read": snap.read,
        "replay_bytes_read": rep.read,
        "snapshot_bytes_written": snap.written,
        "replay_bytes_written": rep.written,
    }
    return FigureResult(fig, metrics)
