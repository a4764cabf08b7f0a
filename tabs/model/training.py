"""Figure: the training curve against three baselines of the same held-out bytes (unigram,
bigram, zlib), and held-out bits per byte per domain, model and baselines side by side."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.experiments.shipped import record
from core.model.corpus import DOMAINS
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE

# (eval.json key, label, line style, colour): the model first, then baselines weakest last.
SERIES = (
    ("model_bpb", "model", "-", ROLE["replay"]),
    ("zlib_bpb", "zlib", "-.", ROLE["waste"]),
    ("bigram_bpb", "bigram", "--", ROLE["snapshot"]),
    ("unigram_bpb", "unigram", ":", ROLE["neutral"]),
)
# A projector: the curve's key below both panels (the bars share its colours), the domains
# without their byte counts.
LOOK = Projector(legends=("below", "hide"))


@dataclass(frozen=True, kw_only=True)
class TrainingLayout:
    value_after: str  # the model's value: after its own "bar", or the "group"'s longest, coloured
    bits_max: float  # the domain panel's x axis end, room for the values


# a projector's larger text: the model's value after the group's longest bar, in the model's
# colour; the x axis longer to hold it
TRAINING = Arrangement(normal=TrainingLayout(value_after="bar", bits_max=7),
                       projector=TrainingLayout(value_after="group", bits_max=8))


def _curve(ax, points: list[dict], summary: dict) -> None:
    steps = [p["step"] for p in points]
    held = [(p["step"], p["heldout_bpb"]) for p in points if "heldout_bpb" in p]
    ax.plot(steps, [p["train_bpb"] for p in points], color=ROLE["replay"], lw=1.2,
            label="train (batch)")
    ax.plot(*zip(*held, strict=True), "o", color=ROLE["reference"], ms=5,
            label="held-out sample, every 100 steps")
    for key, name, style, colour in SERIES[1:]:
        ax.axhline(summary[key], ls=style, color=colour, lw=1.3,
                   label=f"{name} baseline {summary[key]:.2f}")
    ax.set_xlim(0, max(steps))
    ax.set_ylim(0, 8.5)
    ax.set_xlabel("training step")
    ax.set_ylabel("bits per byte")
    ax.set_title(f"Training: {summary['config']['steps']} steps; all "
                 f"{summary['heldout_bytes']:,} held-out bytes: {summary['model_bpb']:.2f} "
                 f"bits/byte", fontsize=10)
    ax.legend(loc="upper right", fontsize=7.5)


def _domains(ax, summary: dict, lay: TrainingLayout) -> np.ndarray:
    """Grouped horizontal bars; returns [D + 1, 4] bits per byte (rows DOMAINS + all)."""
    rows = [*DOMAINS, "all"]
    per = summary["per_domain"]
    vals = np.array([[per[r][key] for key, *_ in SERIES] for r in rows])  # [D + 1, 4]
    h = 0.2
    y = np.arange(len(rows))
    for j, (_, name, _, colour) in enumerate(SERIES):
        ax.barh(y + (j - 1.5) * h, vals[:, j], h, color=colour, label=name)
        if j == 0:
            group = lay.value_after == "group"
            for yi, v, top in zip(y, vals[:, 0], vals.max(1), strict=True):
                ax.text(top if group else v, yi if group else yi - 1.5 * h, f" {v:.2f}",
                        va="center", fontsize=7, color=colour if group else None)
    ax.set_yticks(y, [brief(ax, f"{r}\n{per[r]['bytes']:,} B", r) for r in rows], fontsize=7.5)
    ax.invert_yaxis()
    ax.set_xlim(0, lay.bits_max)
    ax.set_xlabel("held-out bits per byte (lower is better)")
    ax.set_title("Per domain: model vs baselines", fontsize=10)
    ax.legend(loc="lower right", fontsize=7)
    return vals


@arranged_by(TRAINING)
def model_training(*, lay: TrainingLayout) -> FigureResult:
    points, summary = record()
    with lab_figure(4.2, look=LOOK) as fig:
        curve, bars = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.5, 1]})
        _curve(curve, points, summary)
        vals = _domains(bars, summary, lay)
    metrics: dict[str, float | int] = {
        "steps": summary["config"]["steps"],
        "params": summary["params"],
        "heldout_bytes": summary["heldout_bytes"],
    }
    for key, *_ in SERIES:
        metrics[key] = summary[key]
    for i, name in enumerate(DOMAINS):
        for j, (key, *_) in enumerate(SERIES):
            metrics[f"{name}_{key}"] = float(vals[i, j])
    return FigureResult(fig, metrics)
