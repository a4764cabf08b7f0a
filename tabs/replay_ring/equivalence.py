"""Figure: the streaming ring path (checkpoint + ring replay, flushes, rollbacks) against one
batch recurrence over the committed tokens, with the live error printed on the figure."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.experiments.replay_ring import session
from core.speculative.oracles import SESSION_CHUNK, check_session, token_norms
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
from tabs.replay_ring.common import fixed_ticks

# projector: the legend under the panels, off the flushes, in short words
LOOK = Projector(words={"batch kda_recurrent": "batch", "streaming: checkpoint + ring": "streaming",
                        "committed token position": "committed token"}, legends="below")


@dataclass(frozen=True, kw_only=True)
class EquivalenceLayout:
    plot_width: float  # the plot's width against the live-error panel's 1
    y_bins: int  # the plot's y ticks: at most this many steps


# a projector: the error panel's larger text needs a wider share, and the y axis round steps
# (0.2) that its larger tick labels fit
EQUIVALENCE = Arrangement(normal=EquivalenceLayout(plot_width=2.4, y_bins=6),
                          projector=EquivalenceLayout(plot_width=1.6, y_bins=4))


@arranged_by(EQUIVALENCE)
def ring_equivalence(capacity: int, draft_len: int, accept_rate: float, steps: int, seed: int,
                     dtype: str, *, lay: EquivalenceLayout) -> FigureResult:
    s = session(capacity, draft_len, accept_rate, steps, seed, dtype)
    chk = check_session(s)
    o_ref, do, ds, exact = chk.reference_outputs, chk.max_abs_output, chk.max_abs_state, \
        chk.bit_identical
    chunked_ok, flush_at, N = chk.chunked_within_tol, chk.flush_at, chk.tokens_committed
    restores_ok = chk.restores_exact == chk.restores
    with lab_figure(3.8, look=LOOK) as fig:
        ax, txt = fig.subplots(1, 2, gridspec_kw={"width_ratios": [lay.plot_width, 1]})
        pos = np.arange(N)
        ref_n, str_n = token_norms(o_ref), token_norms(s.outputs)
        for i, x in enumerate(flush_at):
            ax.axvline(x - 0.5, color=ROLE["neutral"], ls=":", lw=1.0,
                       label="flush" if i == 0 else None)
        ax.plot(pos, ref_n, "-", color=ROLE["reference"], lw=2.2, label="batch kda_recurrent")
        ax.plot(pos, str_n, "o", color=ROLE["replay"], ms=4.5,
                label="streaming: checkpoint + ring")
        ymax = float(max(ref_n.max(), str_n.max())) * 1.3
        ax.legend(loc="upper left", ncols=3, handlelength=2.0, columnspacing=2.0)
        ax.set_xlim(-0.5, N - 0.5)
        ax.set_ylim(0, ymax)
        fixed_ticks(ax.xaxis, 0, N - 1, nbins=10, integer=True)
        fixed_ticks(ax.yaxis, 0, ymax, nbins=lay.y_bins)
        txt.axis("off")
        tick = {True: "✓", False: "✗"}
        # projector: the verdicts only; the run's make-up is the lesson's
        ax.set_xlabel("committed token position")
        ax.set_ylabel(brief(ax, f"‖o_t‖ over {s.dims.H} heads ({dtype})", f"‖o_t‖ ({dtype})"))
        ax.set_title(brief(ax, f"Outputs of the {N} committed tokens: streaming vs batch",
                           f"Streaming vs batch: {N} tokens"))
        txt.set_title(brief(txt, "Live error, this run", "Live error"))
        short = [f"max|Δo| = {do:.3g}", f"max|ΔS| = {ds:.3g}", f"bit for bit {tick[exact]}",
                 f"chunked ≤ {chk.chunked_tol:.0e} {tick[chunked_ok]}",
                 f"restores {chk.restores_exact}/{chk.restores} {tick[restores_ok]}",
                 f"{len(flush_at)} flushes"]
        lines = [
            f"dtype           {dtype}",
            f"tokens          {N} committed = Σ (n + 1)",
            f"flushes         {len(flush_at)}",
            "",
            "streaming vs batch:",
            f"  max|Δo| = {do:.3g}",
            f"  max|ΔS| = {ds:.3g}",
            f"  bit for bit  {tick[exact]}",
            "",
            f"chunked form (C={SESSION_CHUNK}) vs batch:",
            f"  |Δ| ≤ {chk.chunked_tol:.0e}  {tick[chunked_ok]}",
            "",
            "snapshot ring restore == state:",
            f"  {chk.restores_exact} of {chk.restores} restores  {tick[restores_ok]}",
        ]
        shorten(txt.text(0.0, 1.0, "\n".join(lines), transform=txt.transAxes, va="top",
                         ha="left", fontsize=8.5, family="DejaVu Sans Mono", linespacing=1.35),
                "\n".join(short))
    metrics = {
        "dtype": dtype,
        "tokens_committed": N,
        "max_abs_output": do,
        "max_abs_state": ds,
        "bit_identical": exact,
        "chunked_within_tol": chunked_ok,
        "snapshot_restores": chk.restores,
        "snapshot_restores_exact": restores_ok,
        "flushes": len(flush_at),
    }
    return FigureResult(fig, metrics)
