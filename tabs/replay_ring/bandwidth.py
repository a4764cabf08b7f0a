"""Figure: the bandwidth ledger at K3 scale (cumulative bytes written and read by the raw-input
ring and by the snapshot ring over the same verify steps), and what bounds the ring length L.

One convention (core.speculative.cost): fp32 state and gate, bf16 k, v, beta and conv rows, q not
stored; every KDA layer of K3. The right panel sweeps L over this session's own accept draws
with core.speculative.bounds.ring_schedule (bookkeeping only, no tensors).
"""

from __future__ import annotations

import numpy as np

from core.dims import K3
from core.experiments.replay_ring import session
from core.speculative.bounds import K3_GATE_LOWER_BOUND, max_ring_for_gate, ring_schedule
from core.speculative.session import Traffic, accepted_draws
from tabs.axes import plain_log
from tabs.figure import FigureResult, Projector, brief, lab_figure, shorten
from tabs.palette import ROLE
from tabs.replay_ring import MAX_CAPACITY
from tabs.replay_ring.common import fixed_ticks
from tabs.units import GIB

SERIES = (  # field, label, colour role, line style
    ("snap_written", "snapshot ring: written", "snapshot", "-"),
    ("snap_read", "snapshot ring: read", "snapshot", "--"),
    ("raw_written", "raw-input ring: written", "replay", "-"),
    ("raw_read", "raw-input ring: read", "replay", "--"),
)
FLUSH = "flush: the ring writes one state"
OVERFLOW = (f"(L − 1)·|lb| > 80 at lb = −{-K3_GATE_LOWER_BOUND:g}: a parallel\n"
            "replay's decay factors overflow fp32")
REPLAYED = "entries replayed (each one H·d_k·d_v state update)"
FLUSHES = "flushes (each writes one whole state)"
# projector: one legend under both panels, off the data, in short words
LOOK = Projector(words={
    "snapshot ring: written": "snapshot: written", "snapshot ring: read": "snapshot: read",
    "raw-input ring: written": "ring: written", "raw-input ring: read": "ring: read",
    FLUSH: "flush step", OVERFLOW: "fp32 decay overflow", REPLAYED: "replayed / token",
    FLUSHES: "flushes / token", "ring capacity L (this session's accept draws)":
    "ring capacity L", "per committed token (log)": "per token (log)",
    "What bounds L: replay work grows, flushes thin out": "What bounds L"}, legends="below")


def _totals(ledger: list[Traffic]) -> dict[str, np.ndarray]:
    """Cumulative bytes after step 0 (nothing yet), 1, ..., S."""
    return {f: np.cumsum([0] + [getattr(t, f) for t in ledger]) for f, *_ in SERIES}


def _ledger(ax, cum: dict[str, np.ndarray], flushes: list[int]) -> tuple[float, float]:
    steps = len(cum["raw_read"]) - 1
    x = np.arange(steps + 1)
    for i, step in enumerate(flushes):
        ax.axvline(step, color=ROLE["neutral"], ls=":", lw=1.0,
                   label=FLUSH if i == 0 else None)
    for f, label, role, ls in SERIES:
        ax.plot(x, cum[f] / GIB, ls, color=ROLE[role], label=label, marker="o", ms=2.5)
    top = max(float(v[-1]) for v in cum.values()) / GIB * 1.08
    ax.set_ylim(0, top)
    ax.set_xlim(0, steps)
    fixed_ticks(ax.xaxis, 0, steps, nbins=10, integer=True)
    fixed_ticks(ax.yaxis, 0, top, nbins=6)
    ax.set_xlabel("verify step")
    w = float(cum["snap_written"][-1] / cum["raw_written"][-1])
    r = float(cum["snap_read"][-1] / cum["raw_read"][-1])
    # projector: the ratio only; the byte convention is the lesson's
    ax.set_ylabel(brief(ax, f"cumulative GiB, all {K3.n_kda} KDA layers", "cumulative GiB"))
    ax.set_title(brief(ax, f"Bytes moved at K3 scale (H={K3.kda.H}, d_k=d_v={K3.kda.dk})",
                       "Bytes moved at K3 scale"), loc="left")
    shorten(ax.text(0.02, 0.62, f"fp32 S and g; bf16 k, v, β, conv rows; no q\n\nafter {steps} "
                    f"steps, snapshot ÷ ring:\nwritten {w:.1f}×, read {r:.1f}×",
                    transform=ax.transAxes, ha="left", va="top", fontsize=8),
            f"snapshot ÷ ring:\nwritten {w:.1f}×\nread {r:.1f}×")
    ax.legend(loc="upper left", fontsize=7.5)
    return w, r


def _bounds(ax, capacity: int, draft_len: int, draws: tuple[int, ...]) -> dict[str, float]:
    Ls = np.arange(draft_len + 1, MAX_CAPACITY + 1)
    scheds = [ring_schedule(int(L), draft_len, draws) for L in Ls]
    replayed = np.array([s.replayed_per_token for s in scheds])
    flushes = np.array([s.flushes_per_token for s in scheds])
    gate = max_ring_for_gate()
    ax.axvspan(gate + 0.5, Ls[-1] + 0.5, color=ROLE["rejected"], alpha=0.12, lw=0,
               label=OVERFLOW)
    ax.plot(Ls, replayed, "o-", ms=3, color=ROLE["replay"], label=REPLAYED)
    ax.plot(Ls, np.where(flushes > 0, flushes, np.nan), "s-", ms=3, color=ROLE["snapshot"],
            label=FLUSHES)
    ax.axvline(capacity, color=ROLE["annotation"], lw=0.8)
    lo, hi = 0.001, 100.0  # no flush at all at some L: no point there (0 has no log)
    ax.set_xlim(Ls[0] - 0.5, Ls[-1] + 0.5)
    ax.set_yscale("log")
    ax.set_ylim(lo, hi)
    plain_log(ax.yaxis, lo, hi)
    fixed_ticks(ax.xaxis, int(Ls[0]), int(Ls[-1]), nbins=10, integer=True)
    ax.set_xlabel("ring capacity L (this session's accept draws)")
    ax.set_ylabel("per committed token (log)")
    ax.set_title("What bounds L: replay work grows, flushes thin out", loc="left")
    ax.legend(loc="upper left", fontsize=7.5)
    i = int(np.flatnonzero(Ls == capacity)[0])
    return {"replayed_per_token": float(replayed[i]), "flushes_per_token": float(flushes[i]),
            "gate_max_capacity": gate}


def ring_bandwidth(capacity: int, draft_len: int, accept_rate: float, steps: int, seed: int,
                   dtype: str) -> FigureResult:
    s = session(capacity, draft_len, accept_rate, steps, seed, dtype)
    k3 = _totals([r.k3 for r in s.steps])
    flushes = [i + 1 for i, r in enumerate(s.steps) if r.flushed]
    with lab_figure(4.2, look=LOOK) as fig:
        left, right = fig.subplots(1, 2)
        k3_w, k3_r = _ledger(left, k3, flushes)
        bounds = _bounds(right, capacity, draft_len, accepted_draws(s.params))
    u = s.k3_units
    metrics: dict[str, int | float] = {
        "k3_state_bytes_per_layer": u.state,
        "k3_record_bytes_per_layer": u.raw,
        "k3_conv_row_bytes_per_layer": u.conv_row,
        "flushes": len(flushes),
    }
    for f, *_ in SERIES:
        metrics[f"k3_{f}_gib"] = float(k3[f][-1]) / GIB
    metrics |= {"k3_write_ratio": k3_w, "k3_read_ratio": k3_r, **bounds}
    return FigureResult(fig, metrics)
