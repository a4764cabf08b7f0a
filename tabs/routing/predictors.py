"""Figure: how well each predictor guesses layer L+1's experts, per layer (recall of the
experts then used), and how much of what it loaded was evicted before any use (waste)."""

from __future__ import annotations

import numpy as np

from core.experiments.routing import setting
from core.experiments.routing_grid import DIMS
from core.routing.prefetch import PrefetchMeters
from tabs.figure import FigureResult, Projector, brief, lab_figure
from tabs.palette import ROLE
from tabs.units import MIB

SERIES = {"previous": ("previous token's choice", ROLE["neutral"]),
          "pilot": ("next layer's router, run now", ROLE["prefetch"]),
          "oracle": ("oracle: the recorded future", ROLE["reference"])}
SHORT = {"previous": "previous", "pilot": "next router", "oracle": "oracle",
         "both": "next router + routing"}
# Reported for GLM-5.2 (744B, top-8 of 256) by colibri's LOOKA study; not this model.
REPORTED = {"pilot": 0.716, "previous": 0.413}
# Normal mode's panels (figure fractions, left/bottom/width/height): where constrained layout put
# them. Fixed axis limits and words; the legend below is always two rows (its height moves by
# a third of a pixel with the setting's words: these are the taller rows').
RECTS = ((0.0544, 0.2422, 0.4406, 0.7044), (0.5553, 0.2422, 0.4406, 0.7044))
TITLE_Y = 1.0  # a fixed title spot (no x ticks on top), so a draw skips measuring every axis


def _meters(rec) -> list[PrefetchMeters]:
    return [PrefetchMeters.from_row(row) for row in rec.layer_prefetch]


def _place(fig) -> None:
    for ax, rect in zip(fig.axes, RECTS, strict=True):
        ax.set_position(rect)


def routing_predictors(M: int, J: int, method: str, alpha: float,
                       capacity: str) -> FigureResult:
    s = setting(M, J, method, alpha, capacity)
    sw = s.sweep
    series = {p: (*SERIES[p], sw.prefetch[p]) for p in SERIES}
    if not s.route.stock:
        series["both"] = (f"PILOT under {s.words()}", ROLE["replay"], s.arms["both"])
    # a projector: short names (the lesson says what each predictor is), shorter labels
    words = {label: SHORT[p] for p, (label, *_) in series.items()}
    words |= {f"{p} on GLM-5.2, reported: {100 * v:.1f}%": f"GLM-5.2 {p} {100 * v:.1f}%"
              for p, v in REPORTED.items()}
    words["predicted layer (layer 0 is never predicted)"] = "predicted layer"
    layers = np.arange(1, DIMS.n_layers)  # layer 0 is never predicted
    w = 0.8 / len(series)
    loads, short_loads = [], []
    metrics: dict[str, float | int | str] = {"capacity": s.capacity, "setting": s.route.label()}
    # normal mode: fixed margins (RECTS): constrained layout was ~40% of a redraw
    with lab_figure(4.4, look=Projector(words=words), place=_place) as fig:
        rec_ax, waste_ax = fig.subplots(1, 2)
        for j, (name, (label, colour, rec)) in enumerate(series.items()):
            ms = _meters(rec)[1:]
            x = layers + (j - (len(series) - 1) / 2) * w
            recall = [100 * m.recall for m in ms]
            waste = [100 * m.wasted / m.loaded if m.loaded else 0.0 for m in ms]
            rec_ax.bar(x, recall, w, color=colour, label=label)
            waste_ax.bar(x, waste, w, color=colour, label=label)
            tot = PrefetchMeters.from_row(np.sum([r for r in rec.layer_prefetch], 0).tolist())
            loads.append(f"{label.split(':')[0]}: {tot.loaded / rec.positions:.2f}")
            short_loads.append(f"{SHORT[name]}: {tot.loaded / rec.positions:.2f}")
            metrics |= {f"{name}_recall": tot.recall, f"{name}_precision": tot.precision,
                        f"{name}_wasted_share": tot.wasted / tot.loaded if tot.loaded else 0.0,
                        f"{name}_wasted_mib_per_token": rec.wasted_bytes / rec.positions / MIB,
                        f"{name}_hit_rate": rec.hit_rate}
        for p, v in REPORTED.items():
            rec_ax.axhline(100 * v, color=SERIES[p][1], ls=":", lw=1.5,
                           label=f"{p} on GLM-5.2, reported: {100 * v:.1f}%")
        for ax in (rec_ax, waste_ax):
            ax.set_xticks(layers, [f"{i}\n{DIMS.layer_kinds[i].upper()}" for i in layers])
            ax.set_xlabel("predicted layer (layer 0 is never predicted)")
            ax.grid(axis="x", visible=False)
        rec_ax.set_ylim(0, 112)
        rec_ax.set_ylabel(brief(rec_ax, "recall: % of used experts predicted", "recall, %"))
        rec_ax.set_title(brief(rec_ax, f"Recall of the next layer's experts (top-{DIMS.top_k} "
                               "predicted)", "Recall, next layer"), y=TITLE_Y)
        handles, labels = rec_ax.get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=8)
        waste_ax.set_ylim(0, 100)
        waste_ax.text(0.98, 0.97, brief(waste_ax, "experts prefetched per token\n"
                                        + "\n".join(loads),
                                        "loads per token\n" + "\n".join(short_loads)),
                      transform=waste_ax.transAxes, ha="right", va="top", fontsize=8.5)
        waste_ax.set_ylabel(brief(waste_ax, "% of prefetched experts evicted unused",
                                  "% evicted unused"))
        waste_ax.set_title(brief(waste_ax, f"Waste at {s.capacity} slots: loaded, never used",
                                 f"Waste at {s.capacity} slots"), y=TITLE_Y)
    return FigureResult(fig, metrics)
