"""Figure: per-class budgets under a long burst, measured honestly, beside the wrong P95 that
counts each rejection as a 2,000,000 s TTFT."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from core.fleet.budgets import CLASSES
from core.fleet.config import DEMO_BUDGET
from core.fleet.metrics import SEED_SENTINEL, naive_p95_by_class
from tabs.figure import FigureResult, lab_figure, snap_layout
from tabs.fleet_sim.common import BURST_S, CLASS_COLORS, MODES, budget_runs
from tabs.palette import ROLE

W = 0.4
# NOTE: the queue mode refuses once queue_limit requests wait, so it is not a pure "defer".
MODE_LABEL = {"off": "off (no cap)", "reject": "reject",
              "queue": f"bounded queue ({DEMO_BUDGET.queue_limit})"}
MODE_LINES = {**MODE_LABEL, "queue": MODE_LABEL["queue"].replace(" (", "\n(")}  # as drawn
P95_FLOOR, P95_TOP = 0.05, 500.0  # default P95 axis; it grows to fit the data
LABEL_UP = 1.15  # a value label sits this factor above its bar top
TOP_FRAC = 0.88  # every value label's baseline stays below this fraction of the axis height
LEGEND_FRAC = 0.68  # ... and below this under the upper-left legend (the first mode's bars)
FATES = (("hit", "met SLO"), ("miss", "admitted, late"), ("rejected", "rejected"))


def _x(m: int, k: int) -> float:
    return m + (k - 0.5) * (W + 0.04)


def _ticks(ax, extra: dict[tuple[int, int], str] | None = None) -> None:
    """Class names under each bar (plus an optional second line), mode names under each pair."""
    ax.set_xticks([_x(m, k) for m in range(3) for k in range(2)],
                  [CLASSES[k] + (f"\n{extra[m, k]}" if extra else "")
                   for m in range(3) for k in range(2)], fontsize=6.5 if extra else 7)
    ax.set_xlim(-0.55, 2.55)
    ax.grid(False, axis="x")
    for m, mode in enumerate(MODES):
        ax.text(m, -0.2 if extra else -0.12, MODE_LINES[mode], ha="center", va="top", fontsize=8,
                fontweight="bold", linespacing=1.1, transform=ax.get_xaxis_transform())


def _log_top(values: list[float], frac: float, floor: float) -> float:
    """The smallest top of a log axis starting at `floor` that puts every value at or below
    `frac` of the axis height (NaN values ignored)."""
    finite = [v for v in values if math.isfinite(v) and v > 0]
    if not finite:
        return floor * 10
    lo, hi = math.log10(floor), math.log10(max(finite))
    return 10 ** (lo + max(hi - lo, 0.0) / frac)


def _p95_limits(p95s: list[float]) -> tuple[float, float]:
    """(bottom, top) of the P95 axis: the default 0.05-500 s unless the data needs more room."""
    finite = [v for v in p95s if math.isfinite(v) and v > 0]
    bottom = min([P95_FLOOR, *(v / 2 for v in finite)])
    labels = [v * LABEL_UP for v in p95s]
    top = max(P95_TOP, _log_top(labels, TOP_FRAC, bottom),
              _log_top(labels[:2], LEGEND_FRAC, bottom))  # the legend covers the first pair
    return bottom, top


def _decade_ticks(bottom: float, top: float) -> tuple[list[float], list[str]]:
    ticks = [10.0**e for e in range(math.ceil(math.log10(bottom)), math.floor(math.log10(top)) + 1)]
    names = {0.01: "0.01", 0.1: "0.1", 1.0: "1", 10.0: "10", 100.0: "100", 1e3: "1k", 1e4: "10k",
             1e5: "100k", 1e6: "1M"}
    return ticks, [names.get(t, f"{t:g}") for t in ticks]


def fleet_sim_budgets(long_burst: int, long_budget: int, seed: int) -> FigureResult:
    runs = budget_runs(long_burst, long_budget, seed)
    metrics: dict[str, float | int | bool | str] = {
        "long_burst": long_burst, "long_budget": long_budget,
        "burst_window": f"{BURST_S[0]:g}-{BURST_S[1]:g} s"}
    n_label: dict[tuple[int, int], str] = {}
    labels: list[str] = []
    xs, shares, p95s, wrongs, slos, colors = [], [], [], [], [], []
    for m, (mode, res) in enumerate(zip(MODES, runs, strict=True)):
        naive_p95s = naive_p95_by_class(res.records)
        for k, name in enumerate(CLASSES):
            c = res.summary.by_class(name)
            met = c.met
            naive = naive_p95s[k]
            xs.append(_x(m, k))
            # NOTE: "admitted, late" is admitted minus met, so it would also hold interrupted
            # requests (SLO misses); this scene has no failure, so there are none.
            shares.append([100 * n / c.offered for n in (met, c.admitted - met, c.rejected)])
            p95s.append(c.p95)
            wrongs.append(naive)
            slos.append(c.slo_s)
            colors.append(CLASS_COLORS[name])
            deferred = f"\ndef. {c.deferral_rate:.0%}" if c.deferred else ""
            labels.append(f"{c.slo_attainment:.0%}\n{c.goodput_rps:.1f}/s{deferred}")
            n_label[m, k] = f"n={c.n_ttft}"
            tag = f"{mode}_{name}"
            metrics |= {
                f"{tag}_p95_admitted_s": c.p95,
                f"{tag}_n_admitted": c.n_ttft,
                f"{tag}_rejection_rate": c.rejection_rate,
                f"{tag}_deferral_rate": c.deferral_rate,
                f"{tag}_slo_attainment": c.slo_attainment,
                f"{tag}_goodput_rps": c.goodput_rps,
                f"{tag}_sentinel_p95_WRONG": naive,
            }
    share = np.array(shares)  # (6 bars, 3 fates): % of offered
    with lab_figure(4.3) as fig:
        fate, p95, wrong = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.15, 1, 1]})
        bottom = np.zeros(len(xs))
        for j, (role, _) in enumerate(FATES):
            fate.bar(xs, share[:, j], W, bottom=bottom, color=ROLE[role], lw=0)
            bottom += share[:, j]
        p95.bar(xs, p95s, W, color=colors)
        p95.hlines(slos, np.array(xs) - W / 2, np.array(xs) + W / 2, color=ROLE["reference"],
                   lw=1.5)
        wrong.bar(xs, wrongs, W, color=colors, hatch="xx", edgecolor=ROLE["rejected"], lw=0.5)
        bottom_s, top_s = _p95_limits(p95s)
        for x, label, v, bad in zip(xs, labels, p95s, wrongs, strict=True):
            fate.text(x, 101, label, ha="center", va="bottom", fontsize=7, linespacing=1.1)
            if math.isnan(v):
                p95.text(x, bottom_s * 1.3, "n=0: no latency", ha="center", va="bottom",
                         rotation=90, fontsize=7, color=ROLE["miss"])
            else:
                p95.text(x, v * LABEL_UP, f"{v:.2f}", ha="center", va="bottom", fontsize=7)
            if bad < SEED_SENTINEL:
                wrong.text(x, bad * 1.3, f"{bad:.2f}", ha="center", va="bottom", fontsize=7)
        fate.set_ylim(0, 140)
        fate.set_yticks([0, 25, 50, 75, 100])
        fate.set_ylabel("% of offered requests")
        fate.set_title("SLO attainment (%), goodput (/s)")
        fate.legend(handles=[Patch(color=ROLE[r], label=lbl) for r, lbl in FATES],
                    loc="upper center", ncols=3, fontsize=7, handlelength=1.2,
                    columnspacing=0.8, title_fontsize=7,
                    title=f"{long_burst} long requests in {BURST_S[0]:g}-{BURST_S[1]:g} s, "
                          f"long budget {long_budget}")
        p95.set_yscale("log")
        p95.set_ylim(bottom_s, top_s)
        p95.set_yticks(*_decade_ticks(bottom_s, top_s))
        p95.set_ylabel("P95 TTFT, admitted only (s, log)")
        p95.set_title("RIGHT: P95, admitted only")
        slo = runs[0].config.slo_s
        p95.legend(handles=[*(Patch(color=CLASS_COLORS[n], label=f"{n} class") for n in CLASSES),
                            Line2D([], [], color=ROLE["reference"], lw=1.5,
                                   label=f"TTFT SLO ({slo[0]:g} s, {slo[1]:g} s)")],
                   loc="upper left", fontsize=7)
        wrong.set_yscale("log")
        wrong.set_ylim(0.05, 5e8)
        wrong.set_yticks([0.1, 10, 1e3, 1e5, 1e7], ["0.1", "10", "1k", "100k", "10M"])
        wrong.set_ylabel("'P95 TTFT' (s, log)")
        wrong.axhline(SEED_SENTINEL, color=ROLE["rejected"], ls="--", lw=1)
        wrong.text(2.55, SEED_SENTINEL * 2.2, f"rejection = {SEED_SENTINEL:,.0f} s", ha="right",
                   fontsize=7, color=ROLE["rejected"])
        wrong.set_title("WRONG: rejections as a TTFT", color=ROLE["miss"])
        # NOTE: with exactly 5% rejected, 0.95 (n - 1) falls 0.05 of the way from the largest
        # admitted TTFT to the first sentinel, so the interpolated P95 is ~0.05 x the sentinel.
        wrong.text(0.03, 0.97, "P95 interpolates: with 5% of a class\nrejected it is already "
                   f"~{0.05 * SEED_SENTINEL:,.0f} s;\na few more and it IS the sentinel.",
                   transform=wrong.transAxes, va="top", fontsize=7, color=ROLE["miss"])
        for ax in (p95, wrong):
            ax.minorticks_off()
        _ticks(fate)
        _ticks(p95, n_label)
        _ticks(wrong)
    snap_layout(fig)
    return FigureResult(fig, metrics)
