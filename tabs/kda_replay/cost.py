"""Figure: the snapshot / replay byte ratio vs draft length (constant) and vs d_k·d_v."""

from __future__ import annotations

import numpy as np

from tabs.axes import plain_log
from tabs.figure import FigureResult, lab_figure
from tabs.kda_replay.common import DRAFTS, k3_cost, k3_label, one_dtype_ratio, toy_cost
from tabs.palette import ROLE
from tabs.units import KIB

WIDTHS = np.array([8, 16, 32, 64, 128, 256])
SEED_CLAIM = (32, 4.0)  # the seed write-up's "H=16, d_k=d_v=32 -> 4.0x" (an arithmetic slip)


def kda_replay_cost(draft_len: int, heads: int, dk: int, dv: int) -> FigureResult:
    toy, k3 = toy_cost(heads, dk, dv, draft_len), k3_cost(draft_len)
    with lab_figure(3.9) as fig:
        left, right = fig.subplots(1, 2)
        for cost, style, name in (
            (k3, "-", k3_label()),
            (toy, ":", f"toy (H={heads}, {dk}×{dv})"),
        ):
            left.plot(
                DRAFTS,
                DRAFTS * cost.snapshot_per_step / KIB,
                style,
                color=ROLE["snapshot"],
                label=f"snapshot, {name}",
            )
            left.plot(
                DRAFTS,
                DRAFTS * cost.raw_per_step / KIB,
                style,
                color=ROLE["replay"],
                label=f"raw inputs, {name}",
            )
            left.plot(
                [draft_len] * 2,
                [draft_len * cost.raw_per_step / KIB, draft_len * cost.snapshot_per_step / KIB],
                color=ROLE["annotation"],
                lw=0.8,
            )
            left.annotate(
                f"{cost.ratio:.1f}×",
                (draft_len, draft_len * cost.raw_per_step / KIB * 4),
                xytext=(4, 0),
                textcoords="offset points",
                fontsize=8,
            )
        left.set_yscale("log")
        lo = min(toy.raw_per_step, k3.raw_per_step) / KIB / 1.5
        hi = DRAFTS[-1] * max(toy.snapshot_per_step, k3.snapshot_per_step) / KIB * 1.5
        left.set_ylim(lo, hi)
        plain_log(left.yaxis, lo, hi)
        left.set_xlim(DRAFTS[0], DRAFTS[-1])
        left.set_xlabel("draft length γ")
        left.set_ylabel("KiB per layer for γ steps")
        left.set_title("Both grow linearly in γ; the ratio does not move")
        left.legend(loc="lower right", fontsize=7)

        d2 = WIDTHS.astype(float) ** 2
        right.plot(
            d2,
            [one_dtype_ratio(int(w)) for w in WIDTHS],
            "o-",
            color=ROLE["replay"],
            label="one dtype, q kept: d_k·d_v / (3d_k + d_v + 1)",
        )
        right.plot(
            d2,
            [k3_cost(1, int(w), int(w)).ratio for w in WIDTHS],
            "s-",
            color=ROLE["snapshot"],
            label="K3 dtypes: fp32 state, bf16 k v β, fp32 g",
        )
        right.plot(
            [dk * dv],
            [toy.ratio],
            "D",
            color=ROLE["accepted"],
            ms=8,
            label=f"your toy: {toy.ratio:.2f}×",
        )
        right.plot(
            [128 * 128],
            [k3.ratio],
            "*",
            color=ROLE["reference"],
            ms=12,
            label=f"K3: {k3.ratio:.1f}×",
        )
        right.plot(
            [SEED_CLAIM[0] ** 2],
            [SEED_CLAIM[1]],
            "x",
            color=ROLE["rejected"],
            ms=9,
            mew=2,
            label=f"seed's claim at 32×32: 4.0× (is {one_dtype_ratio(32):.2f}×)",
        )
        right.set_xscale("log", base=2)
        right.set_yscale("log", base=2)
        ratios = [one_dtype_ratio(int(w)) for w in WIDTHS] + [k3_cost(1, 256, 256).ratio, toy.ratio]
        right.set_xlim(d2[0] / 1.6, d2[-1] * 1.6)
        right.set_ylim(min(ratios) / 1.4, max(ratios) * 1.4)
        plain_log(right.xaxis, d2[0], d2[-1], base=2, every=2)
        plain_log(right.yaxis, min(ratios) / 1.4, max(ratios) * 1.4, base=2)
        right.set_xlabel("d_k · d_v")
        right.set_ylabel("snapshot ÷ raw bytes")
        right.set_title("The ratio grows with the state size")
        right.legend(loc="upper left", fontsize=7)
    metrics = {
        "toy_ratio": toy.ratio,
        "k3_ratio": k3.ratio,
        "one_dtype_ratio_32": one_dtype_ratio(32),
        "one_dtype_ratio_128": one_dtype_ratio(128),
        "toy_snapshot_bytes_gamma": draft_len * toy.snapshot_per_step,
        "toy_raw_bytes_gamma": draft_len * toy.raw_per_step,
        "k3_snapshot_bytes_gamma": draft_len * k3.snapshot_per_step,
        "k3_raw_bytes_gamma": draft_len * k3.raw_per_step,
    }
    return FigureResult(fig, metrics)
