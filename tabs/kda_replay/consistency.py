"""Figure: replay of n accepted drafts equals the recurrence over the committed tokens."""

from __future__ import annotations

import numpy as np
import torch

from core.errors import check_int
from core.kda import kda_chunked, kda_recurrent
from core.replay import DraftProjections, verify_and_replay
from core.tolerances import CHUNKED_MAX_ABS
from tabs.figure import FigureResult, lab_figure
from tabs.palette import ROLE

PREFIX_TOKENS = 8
SEED = 0


def _max_abs(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.double() - b.double()).abs().max()) if a.numel() else 0.0


def _committed_state(heads: int, dk: int, dv: int, dtype: torch.dtype) -> torch.Tensor:
    """S0: the state after a short random prefix, so replay starts from a realistic state."""
    p = DraftProjections.from_random(1, PREFIX_TOKENS, heads, dk, dv, dtype, seed=SEED + 1)
    _, s0 = kda_recurrent(p.q, p.k, p.v, p.g, p.beta)
    return s0  # [1, H, K, V]


def _norms(o: torch.Tensor) -> np.ndarray:
    return o.double().flatten(2).norm(dim=-1)[0].numpy()  # [T] from [1, T, H, V]


def kda_replay_consistency(
    draft_len: int, accepted: int, heads: int, dk: int, dv: int, dtype: str
) -> FigureResult:
    check_int("accepted", accepted, 0, draft_len)
    tdtype = getattr(torch, dtype)
    s0 = _committed_state(heads, dk, dv, tdtype)
    d = DraftProjections.from_random(1, draft_len, heads, dk, dv, tdtype, seed=SEED)
    o_draft, _ = kda_recurrent(d.q, d.k, d.v, d.g, d.beta, initial_state=s0)  # [1, D, H, V]
    cases = (("zero", 0), ("partial", accepted), ("all", draft_len))
    metrics: dict[str, float | int | bool] = {"draft_len": draft_len, "accepted": accepted}
    pos = np.arange(1, draft_len + 1)
    with lab_figure(3.6) as fig:
        axes = fig.subplots(1, 3, sharey=True)
        ymax = float(_norms(o_draft).max()) * 1.35
        for ax, (label, n) in zip(axes, cases, strict=True):
            s0_before = s0.clone()
            s_new, o_rep = verify_and_replay(s0, d, n)  # o_rep [1, n, H, V]
            o_ref, s_ref = kda_recurrent(
                d.q[:, :n], d.k[:, :n], d.v[:, :n], d.g[:, :n], d.beta[:, :n], initial_state=s0
            )
            o_ch, s_ch = kda_chunked(
                d.q[:, :n],
                d.k[:, :n],
                d.v[:, :n],
                d.g[:, :n],
                d.beta[:, :n],
                initial_state=s0,
                chunk_size=4,
            )
            do, ds = _max_abs(o_rep, o_ref), _max_abs(s_new, s_ref)
            dch = max(_max_abs(s_new, s_ch), _max_abs(o_rep, o_ch))
            untouched = bool(torch.equal(s0, s0_before))
            metrics |= {
                f"{label}_n": n,
                f"{label}_max_abs_output": do,
                f"{label}_max_abs_state": ds,
                f"{label}_chunked_within_tol": dch <= CHUNKED_MAX_ABS[dtype],
                f"{label}_committed_untouched": untouched,
            }
            ax.plot(
                pos, _norms(o_draft), "--", color=ROLE["neutral"], label="drafted (speculative)"
            )
            if n:
                ax.plot(
                    pos[:n],
                    _norms(o_ref),
                    "-",
                    color=ROLE["reference"],
                    lw=2.5,
                    label="recurrence over committed",
                )
                ax.plot(pos[:n], _norms(o_rep), "o", color=ROLE["replay"], ms=6, label="replay")
            ax.axvspan(n + 0.5, draft_len + 0.5, color=ROLE["rejected"], alpha=0.12, lw=0)
            ax.set_title(f"{label}: n = {n} of {draft_len}")
            ax.set_xlim(0.5, draft_len + 0.5)
            ax.set_ylim(0, ymax)
            ax.set_xticks(pos)
            ax.set_xlabel("draft position")
            ok = "✓" if dch <= CHUNKED_MAX_ABS[dtype] else "✗"
            ax.text(
                0.03,
                0.97,
                f"max|Δo| = {do:.3g}\nmax|ΔS| = {ds:.3g}\n"
                f"chunked form: |Δ| < {CHUNKED_MAX_ABS[dtype]:.0e} {ok}",
                transform=ax.transAxes,
                va="top",
                fontsize=8,
                family="DejaVu Sans Mono",
            )
        axes[0].set_ylabel(f"‖o_t‖ over heads ({dtype})")
        axes[-1].legend(loc="lower right")
    return FigureResult(fig, metrics)
