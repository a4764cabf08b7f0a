"""Figure: every preset at the chosen spacing: tokens reused vs computed, why the lookup stopped,
and whether the last logits equal a cold run, for the safe lookup and for check_groups=False."""

from __future__ import annotations

import numpy as np

from core.experiments.prefix import runs
from core.experiments.scenes import PRESETS
from core.tolerances import FP32_DECODE_MAX_ABS
from tabs.axes import plain_log
from tabs.figure import FigureResult, is_presenting, lab_figure
from tabs.palette import ROLE

FLOOR = 1e-9  # where an exact 0 is drawn on the log axis
# NOTE: a nonzero difference within the tolerance is fp32 rounding, and its size depends on the
# CPU's kernels (5.7e-06 on one machine is 6.7e-06 on another), so the figure and its metrics
# name it "rounding" and draw it at one place instead of printing a machine's digits.
ROUNDING_AT = FP32_DECODE_MAX_ABS / 10


def shown(v: float) -> str:
    """What the figure prints for a max |Δ logits|: exact, rounding, or the value (2 digits)."""
    if v == 0:
        return "0"
    return "rounding" if v <= FP32_DECODE_MAX_ABS else f"{v:.1e}"


def _drawn_at(v: float) -> float:
    return FLOOR if v == 0 else ROUNDING_AT if v <= FP32_DECODE_MAX_ABS else v


def _tokens(ax, rs, preset: str, k: int, present: bool) -> None:
    y = np.arange(len(PRESETS))
    for i, p in enumerate(PRESETS):
        r = rs[p]
        ax.barh(i, r.reused_tokens, 0.5, color=ROLE["hit"],
                label="reused (safe lookup)" if i == 0 else None)
        ax.barh(i, r.computed_tokens, 0.5, left=r.reused_tokens, color=ROLE["neutral"],
                label="computed" if i == 0 else None)
        ax.text(r.request_tokens + 10, i, r.lookup.reason, va="center", fontsize=8)
        if r.unsafe_reused_tokens != r.reused_tokens:
            ax.barh(i + 0.38, r.unsafe_reused_tokens, 0.2, color=ROLE["rejected"],
                    label="unsafe reuse" if present else "reused with check_groups=False")
            ax.text(r.unsafe_reused_tokens + 10, i + 0.38,
                    f"unsafe: {r.unsafe_reused_tokens}" if present
                    else f"check_groups=False reuses {r.unsafe_reused_tokens}", va="center",
                    fontsize=7, color=ROLE["rejected"])
    ax.set_yticks(y, [f"▶ {p}" if p == preset else p for p in PRESETS])
    for label in ax.get_yticklabels():
        label.set_fontweight("bold" if label.get_text().startswith("▶") else "normal")
    ax.set_ylim(len(PRESETS) - 0.4, -1.05)
    ax.set_xlim(0, 900)
    if present:  # projector: fewer ticks and words, the legend in a row under the axis
        ax.set_xticks(range(0, 701, 256))
        ax.set_xlabel("request tokens")
        ax.set_title(f"k = {k}: reused or computed")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncols=3, fontsize=7.5,
                  handlelength=1.0, columnspacing=0.8)
        return
    ax.set_xticks(range(0, 701, 128))
    ax.set_xlabel("request tokens (reused from the cache + computed by the model)")
    ax.set_title(f"Every preset at k = {k}: tokens reused or computed, and why")
    ax.legend(loc="upper left", ncols=3, fontsize=7.5)


def _logits(ax, rs, present: bool) -> None:
    for i, p in enumerate(PRESETS):
        r = rs[p]
        for dy, v, colour, mk, name in (
                (-0.12, r.max_abs_safe, ROLE["accepted"], "o", "safe" if present
                 else "safe lookup"),
                (0.12, r.max_abs_unsafe, ROLE["rejected"], "X", "unsafe" if present
                 else "check_groups=False")):
            x = _drawn_at(v)
            ax.plot([FLOOR, x], [i + dy, i + dy], color=colour, lw=1.0)
            ax.plot([x], [i + dy], mk, color=colour, ms=7, label=name if i == 0 else None)
            if not present or dy < 0 or shown(v) != shown(r.max_abs_safe):  # one label if same
                ax.text(x * 2.5, i + (0 if present and dy < 0 and shown(v) == shown(
                    r.max_abs_unsafe) else dy), shown(v), va="center", fontsize=8)
    ax.axvline(FP32_DECODE_MAX_ABS, color=ROLE["annotation"], ls="--", lw=1.0)
    ax.text(FP32_DECODE_MAX_ABS * 1.3, -0.55, "tolerance" if present
            else f"tolerance\n{FP32_DECODE_MAX_ABS:g}", fontsize=7.5, va="center")
    ax.set_xscale("log")
    ax.set_xlim(FLOOR / 3, 10)
    plain_log(ax.xaxis, FLOOR, 10, every=4 if present else 2)
    ax.set_yticks(range(len(PRESETS)), PRESETS)
    ax.set_ylim(len(PRESETS) - 0.4, -1.05)
    if present:
        ax.set_xlabel("max |Δ logits| vs cold")
        ax.set_title("Same logits as cold?")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncols=2, fontsize=7.5,
                  handlelength=1.0)
        return
    rounded = any(0 < r.max_abs_safe <= FP32_DECODE_MAX_ABS
                  or 0 < r.max_abs_unsafe <= FP32_DECODE_MAX_ABS for r in rs.values())
    ax.set_xlabel(f"max |Δ logits| vs a cold forward (log)\n0 (bit for bit) drawn at {FLOOR:g}"
                  + (f"; fp32 rounding (within tolerance) at {ROUNDING_AT:g}" if rounded else ""))
    ax.set_title("Same last logits as a cold run?")
    ax.legend(loc="upper left", ncols=2, fontsize=7.5)


def prefix_presets(checkpoint_every: int, preset: str) -> FigureResult:
    rs = runs(checkpoint_every)
    with lab_figure(3.9) as fig:
        left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.35, 1]})
        present = is_presenting()
        _tokens(left, rs, preset, checkpoint_every, present)
        _logits(right, rs, present)
    metrics: dict[str, int | float | str | bool] = {"checkpoint_every": checkpoint_every,
                                                    "selected": preset}
    for p in PRESETS:
        r = rs[p]
        metrics |= {
            f"{p}_reused_tokens": r.reused_tokens,
            f"{p}_computed_tokens": r.computed_tokens,
            f"{p}_reason": r.lookup.reason,
            f"{p}_max_abs_safe": shown(r.max_abs_safe),
            f"{p}_max_abs_unsafe": shown(r.max_abs_unsafe),
            f"{p}_safe_within_tol": r.max_abs_safe <= FP32_DECODE_MAX_ABS,
        }
    return FigureResult(fig, metrics)
