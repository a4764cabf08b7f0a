"""Figure: the bandwidth ledger, cumulative bytes written and read by the raw-input ring and by the
snapshot ring over the same verify steps, at the toy dims and at K3 scale."""

from __future__ import annotations

import numpy as np

from core.dims import K3
from core.spec.session import Traffic
from tabs.figure import FigureResult, lab_figure
from tabs.palette import ROLE
from tabs.replay_ring.common import fixed_ticks, session
from tabs.units import GIB, KIB

SERIES = (  # field, label, colour role, line style
    ("snap_written", "snapshot ring: written", "snapshot", "-"),
    ("snap_read", "snapshot ring: read", "snapshot", "--"),
    ("raw_written", "raw-input ring: written", "replay", "-"),
    ("raw_read", "raw-input ring: read", "replay", "--"),
)


def _totals(ledger: list[Traffic]) -> dict[str, np.ndarray]:
    """Cumulative bytes after step 0 (nothing yet), 1, ..., S."""
    return {f: np.cumsum([0] + [getattr(t, f) for t in ledger]) for f, *_ in SERIES}


def _panel(ax, cum: dict[str, np.ndarray], unit: float, unit_name: str, flushes: list[int],
           title: str, widths: str) -> tuple[float, float]:
    steps = len(cum["raw_read"]) - 1
    x = np.arange(steps + 1)
    for i, step in enumerate(flushes):
        ax.axvline(step, color=ROLE["neutral"], ls=":", lw=1.0,
                   label="flush: the ring writes one state" if i == 0 else None)
    for f, label, role, ls in SERIES:
        ax.plot(x, cum[f] / unit, ls, color=ROLE[role], label=label, marker="o", ms=2.5)
    top = max(float(v[-1]) for v in cum.values()) / unit * 1.08
    ax.set_ylim(0, top)
    ax.set_xlim(0, steps)
    fixed_ticks(ax.xaxis, 0, steps, nbins=10, integer=True)
    fixed_ticks(ax.yaxis, 0, top, nbins=6)
    ax.set_xlabel("verify step")
    ax.set_ylabel(f"cumulative {unit_name}")
    ax.set_title(title)
    w = float(cum["snap_written"][-1] / cum["raw_written"][-1])
    r = float(cum["raw_read"][-1] / cum["snap_read"][-1])
    ax.text(0.02, 0.6, f"{widths}\n\nafter {steps} steps the ring writes\n{w:.1f}× less and "
            f"reads {r:.2f}×\nthe snapshot ring's bytes", transform=ax.transAxes, ha="left",
            va="top", fontsize=8)
    return w, r


def ring_bandwidth(capacity: int, draft_len: int, accept_rate: float, steps: int, seed: int,
                   dtype: str) -> FigureResult:
    s = session(capacity, draft_len, accept_rate, steps, seed, dtype)
    toy, k3 = _totals([r.toy for r in s.steps]), _totals([r.k3 for r in s.steps])
    flushes = [i + 1 for i, r in enumerate(s.steps) if r.flushed]
    d = s.dims
    with lab_figure(4.2) as fig:
        left, right = fig.subplots(1, 2)
        toy_w, toy_r = _panel(left, toy, KIB, "KiB", flushes,
                              f"Toy, as this ring stores it: H={d.H}, d_k=d_v={d.dk}",
                              f"every field {dtype}, q stored")
        k3_w, k3_r = _panel(right, k3, GIB, "GiB", flushes,
                            f"K3 scale: H={K3.kda.H}, d_k=d_v={K3.kda.dk}, {K3.n_kda} KDA layers",
                            "fp32 state and g; bf16 k, v, β; no q")
        left.legend(loc="upper left", fontsize=7.5)
    metrics: dict[str, int | float] = {
        "toy_state_bytes": s.toy_units.snapshot_bytes_per_step,
        "toy_raw_bytes_per_token": s.toy_units.raw_bytes_per_step,
        "k3_state_bytes_per_layer": s.k3_units.snapshot_bytes_per_step,
        "k3_raw_bytes_per_token_per_layer": s.k3_units.raw_bytes_per_step,
        "flushes": len(flushes),
    }
    for f, *_ in SERIES:
        metrics[f"toy_{f}_bytes"] = int(toy[f][-1])
        metrics[f"k3_{f}_gib"] = float(k3[f][-1]) / GIB
    metrics |= {"toy_write_ratio": toy_w, "toy_read_ratio": toy_r,
                "k3_write_ratio": k3_w, "k3_read_ratio": k3_r}
    return FigureResult(fig, metrics)
