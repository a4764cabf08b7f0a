"""Figure: every preset at the chosen spacing: tokens reused vs computed, why the lookup stopped,
and whether the last logits equal a cold run, for the safe lookup and for check_groups=False."""

from __future__ import annotations

import numpy as np

from core.experiments.prefix import runs
from core.experiments.scenes import PRESETS
from core.tolerances import FP32_DECODE_MAX_ABS
from tabs.axes import plain_log
from tabs.figure import FigureResult, Projector, brief, lab_figure, shorten
from tabs.palette import ROLE

FLOOR = 1e-9  # where an exact 0 is drawn on the log axis
# NOTE: a nonzero difference within the tolerance is fp32 rounding, and its size depends on the
# CPU's kernels (5.7e-06 on one machine is 6.7e-06 on another), so the figure and its metrics
# name it "rounding" and draw it at one place instead of printing a machine's digits.
ROUNDING_AT = FP32_DECODE_MAX_ABS / 10
# A projector: shorter names, one legend under both panels (it keys the unsafe bar, whose
# length the axis reads: no room for its words between the rows).
LOOK = Projector(words={"reused with check_groups=False": "unsafe reuse",
                        "safe lookup": "safe", "check_groups=False": "unsafe"},
                 legends="below")


def shown(v: float) -> str:
    """What the figure prints for a max |Δ logits|: exact, rounding, or the value (2 digits)."""
    if v == 0:
        return "0"
    return "rounding" if v <= FP32_DECODE_MAX_ABS else f"{v:.1e}"


def _drawn_at(v: float) -> float:
    return FLOOR if v == 0 else ROUNDING_AT if v <= FP32_DECODE_MAX_ABS else v


def _tokens(ax, rs, preset: str, k: int) -> None:
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
                    label="reused with check_groups=False")
            ax.text(r.unsafe_reused_tokens + 10, i + 0.38,
                    brief(ax, f"check_groups=False reuses {r.unsafe_reused_tokens}", ""),
                    va="center",
                    fontsize=7, color=ROLE["rejected"])
    ax.set_yticks(y, [f"▶ {p}" if p == preset else p for p in PRESETS])
    for label in ax.get_yticklabels():
        label.set_fontweight("bold" if label.get_text().startswith("▶") else "normal")
    ax.set_ylim(len(PRESETS) - 0.4, -1.05)
    ax.set_xlim(0, 900)
    ax.set_xticks(range(0, 701, 128))
    ax.set_xlabel(brief(ax, "request tokens (reused from the cache + computed by the model)",
                        "request tokens"))
    ax.set_title(brief(ax, f"Every preset at k = {k}: tokens reused or computed, and why",
                       f"k = {k}: reused or computed"))
    ax.legend(loc="upper left", ncols=3, fontsize=7.5)


def _logits(ax, rs) -> None:
    for i, p in enumerate(PRESETS):
        r = rs[p]
        for dy, v, colour, mk, name in (
                (-0.12, r.max_abs_safe, ROLE["accepted"], "o", "safe lookup"),
                (0.12, r.max_abs_unsafe, ROLE["rejected"], "X", "check_groups=False")):
            x = _drawn_at(v)
            ax.plot([FLOOR, x], [i + dy, i + dy], color=colour, lw=1.0)
            ax.plot([x], [i + dy], mk, color=colour, ms=7, label=name if i == 0 else None)
            value = ax.text(x * 2.5, i + dy, shown(v), va="center", fontsize=8)
            if dy > 0 and shown(v) == shown(r.max_abs_safe):  # a projector: one label if same
                shorten(value, "")
    ax.axvline(FP32_DECODE_MAX_ABS, color=ROLE["annotation"], ls="--", lw=1.0)
    ax.text(FP32_DECODE_MAX_ABS * 1.3, -0.55,
            brief(ax, f"tolerance\n{FP32_DECODE_MAX_ABS:g}", "tolerance"), fontsize=7.5,
            va="center")
    ax.set_xscale("log")
    ax.set_xlim(FLOOR / 3, 10)
    plain_log(ax.xaxis, FLOOR, 10, every=2)
    ax.set_yticks(range(len(PRESETS)), PRESETS)
    ax.set_ylim(len(PRESETS) - 0.4, -1.05)
    ax.set_title(brief(ax, "Same last logits as a cold run?", "Same logits as cold?"))
    rounded = any(0 < r.max_abs_safe <= FP32_DECODE_MAX_ABS
                  or 0 < r.max_abs_unsafe <= FP32_DECODE_MAX_ABS for r in rs.values())
    ax.set_xlabel(brief(ax, f"max |Δ logits| vs a cold forward (log)\n0 (bit for bit) drawn "
                        f"at {FLOOR:g}" + (f"; fp32 rounding (within tolerance) at "
                                           f"{ROUNDING_AT:g}" if rounded else ""),
                        "max |Δ logits| vs cold"))
    ax.legend(loc="upper left", ncols=2, fontsize=7.5)


def prefix_presets(checkpoint_every: int, preset: str) -> FigureResult:
    rs = runs(checkpoint_every)
    with lab_figure(3.9, look=LOOK) as fig:
        left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.35, 1]})
        _tokens(left, rs, preset, checkpoint_every)
        _logits(right, rs)
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
