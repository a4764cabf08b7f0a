"""Figure: the training curve against the unigram and bigram baselines (held-out bits/byte)."""

from __future__ import annotations

from tabs.figure import FigureResult, lab_figure
from tabs.model.common import record
from tabs.palette import ROLE


def model_training() -> FigureResult:
    points, summary = record()
    steps = [p["step"] for p in points]
    train = [p["train_bpb"] for p in points]
    held = [(p["step"], p["heldout_bpb"]) for p in points if "heldout_bpb" in p]
    with lab_figure(3.6) as fig:
        ax = fig.subplots()
        ax.plot(steps, train, color=ROLE["replay"], lw=1.2, label="train (batch)")
        ax.plot(*zip(*held, strict=True), "o", color=ROLE["reference"], ms=6,
                label="held-out (every 100 steps)")
        for key, style, name in (("unigram_bpb", ":", "unigram"), ("bigram_bpb", "--", "bigram")):
            ax.axhline(summary[key], ls=style, color=ROLE["snapshot"],
                       label=f"{name} baseline {summary[key]:.2f}")
        ax.set_xlim(0, max(steps))
        ax.set_ylim(0, 8.5)
        ax.set_xlabel("training step")
        ax.set_ylabel("bits per byte")
        ax.set_title(f"Held-out: model {summary['model_bpb']:.3f} bits/byte vs bigram "
                     f"{summary['bigram_bpb']:.3f} and unigram {summary['unigram_bpb']:.3f} "
                     f"({summary['heldout_bytes']:,} held-out bytes)")
        ax.legend(loc="upper right")
    metrics = {
        "model_bpb": summary["model_bpb"],
        "bigram_bpb": summary["bigram_bpb"],
        "unigram_bpb": summary["unigram_bpb"],
        "steps": max(steps),
        "params": summary["params"],
    }
    return FigureResult(fig, metrics)
