"""Figure: replaying the committed positions equals the recurrence over the committed tokens.

The window is the bonus token b plus γ drafts; n accepted drafts replay n + 1 positions. Each
panel also rolls back a real KDA layer's short-conv history (core.speculative.oracles.check_conv)
and prints how far the next output moves when that history is left at the drafted rows.
"""

from __future__ import annotations

import numpy as np

from core.experiments.kda_replay import conv_check, replay_check
from core.speculative.oracles import token_norms
from tabs.figure import FigureResult, Projector, brief, lab_figure, shorten
from tabs.palette import ROLE

# presenting: shorter words, the legend in a row above the panels
LOOK = Projector(words={"window, all folded in": "all folded in",
                        "recurrence over committed": "committed",
                        "window position (b = bonus token)": "window position"},
                 legends="above")


def kda_replay_consistency(
    draft_len: int, accepted: int, heads: int, dk: int, dv: int, dtype: str
) -> FigureResult:
    chk = replay_check(draft_len, accepted, heads, dk, dv, dtype)
    metrics: dict[str, float | int | bool] = {"draft_len": draft_len, "accepted": accepted}
    pos = np.arange(draft_len + 1)
    names = ["b", *map(str, range(1, draft_len + 1))]
    # NOTE: every other position labelled past 8 drafts: 17 labels a panel crowded each other,
    # and the 51 ticks were most of this figure's layout and draw time (issue 14)
    every = 1 if draft_len <= 8 else 2
    drafted = token_norms(chk.drafted_outputs)
    with lab_figure(3.8, look=LOOK) as fig:
        axes = fig.subplots(1, 3, sharey=True)
        ymax = float(drafted.max()) * 1.6
        for ax, case in zip(axes, chk.cases, strict=True):
            label, n, m = case.label, case.n, case.replayed
            conv = conv_check(draft_len, n)
            do, ds = case.max_abs_output, case.max_abs_state
            metrics |= {
                f"{label}_n": n,
                f"{label}_replayed": m,
                f"{label}_max_abs_output": do,
                f"{label}_max_abs_state": ds,
                f"{label}_chunked_within_tol": case.chunked_within_tol,
                f"{label}_committed_untouched": case.committed_untouched,
                f"{label}_conv_exact": conv.history_exact and conv.next_exact,
                f"{label}_conv_uncut_next_off": conv.next_off_uncut,
            }
            ax.plot(pos, drafted, "--", color=ROLE["neutral"], label="window, all folded in")
            ax.plot(pos[:m], token_norms(case.reference_outputs), "-", color=ROLE["reference"],
                    lw=2.5, label="recurrence over committed")
            ax.plot(pos[:m], token_norms(case.replay_outputs), "o", color=ROLE["replay"], ms=6,
                    label="replay")
            ax.axvspan(m - 0.5, draft_len + 0.5, color=ROLE["rejected"], alpha=0.12, lw=0)
            ax.set_xlim(-0.5, draft_len + 0.5)
            ax.set_ylim(0, ymax)
            ax.set_xticks(pos[::every], names[::every])
            ok = "✓" if case.chunked_within_tol else "✗"
            cut = "✓" if conv.history_exact and conv.next_exact else "✗"
            ax.set_title(brief(ax, f"{label}: n = {n} of {draft_len}, replay {m}",
                               f"n = {n}: replay {m}"), loc="left")
            ax.set_xlabel("window position (b = bonus token)")
            # presenting: the checks' verdicts only; the uncut conv offset is in the lesson
            shorten(ax.text(0.03, 0.97,
                            f"max|Δo| = {do:.3g}   max|ΔS| = {ds:.3g}\n"
                            f"chunked form: |Δ| < {case.chunked_tol:.0e} {ok}\n"
                            f"conv history cut at {m}: {cut}\n"
                            f"  left uncut: next max|Δo| = {conv.next_off_uncut:.2g}",
                            transform=ax.transAxes, va="top", fontsize=7.5,
                            family="DejaVu Sans Mono"),
                    f"|Δo| = {do:.2g}, |ΔS| = {ds:.2g}\nchunked {ok}  conv {cut}")
        axes[0].set_ylabel(brief(axes[0], f"‖o_t‖ over heads ({dtype})", f"‖o_t‖ ({dtype})"))
        axes[-1].legend(loc="lower right", fontsize=7.5)
    return FigureResult(fig, metrics)
