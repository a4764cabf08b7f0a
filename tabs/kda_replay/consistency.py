"""Figure: replay of n accepted drafts equals the recurrence over the committed tokens."""

from __future__ import annotations

import numpy as np

from core.spec.checks import check_replay, token_norms
from tabs.figure import FigureResult, lab_figure
from tabs.palette import ROLE


def kda_replay_consistency(
    draft_len: int, accepted: int, heads: int, dk: int, dv: int, dtype: str
) -> FigureResult:
    chk = check_replay(draft_len, accepted, heads, dk, dv, dtype)
    metrics: dict[str, float | int | bool] = {"draft_len": draft_len, "accepted": accepted}
    pos = np.arange(1, draft_len + 1)
    with lab_figure(3.6) as fig:
        axes = fig.subplots(1, 3, sharey=True)
        ymax = float(token_norms(chk.drafted_outputs).max()) * 1.35
        for ax, case in zip(axes, chk.cases, strict=True):
            label, n = case.label, case.n
            do, ds = case.max_abs_output, case.max_abs_state
            metrics |= {
                f"{label}_n": n,
                f"{label}_max_abs_output": do,
                f"{label}_max_abs_state": ds,
                f"{label}_chunked_within_tol": case.chunked_within_tol,
                f"{label}_committed_untouched": case.committed_untouched,
            }
            ax.plot(
                pos, token_norms(chk.drafted_outputs), "--", color=ROLE["neutral"],
                label="drafted (speculative)",
            )
            if n:
                ax.plot(
                    pos[:n],
                    token_norms(case.reference_outputs),
                    "-",
                    color=ROLE["reference"],
                    lw=2.5,
                    label="recurrence over committed",
                )
                ax.plot(pos[:n], token_norms(case.replay_outputs), "o", color=ROLE["replay"], ms=6,
                        label="replay")
            ax.axvspan(n + 0.5, draft_len + 0.5, color=ROLE["rejected"], alpha=0.12, lw=0)
            ax.set_title(f"{label}: n = {n} of {draft_len}")
            ax.set_xlim(0.5, draft_len + 0.5)
            ax.set_ylim(0, ymax)
            ax.set_xticks(pos)
            ax.set_xlabel("draft position")
            ok = "✓" if case.chunked_within_tol else "✗"
            ax.text(
                0.03,
                0.97,
                f"max|Δo| = {do:.3g}\nmax|ΔS| = {ds:.3g}\n"
                f"chunked form: |Δ| < {case.chunked_tol:.0e} {ok}",
                transform=ax.transAxes,
                va="top",
                fontsize=8,
                family="DejaVu Sans Mono",
            )
        axes[0].set_ylabel(f"‖o_t‖ over heads ({dtype})")
        axes[-1].legend(loc="lower right")
    return FigureResult(fig, metrics)
