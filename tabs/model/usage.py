"""Figure: which experts each corpus domain uses in one layer, and how domain-specific routing
is in every layer (mutual information between the domain and one pick, and the top-k set,
against the ceiling H(domain) and a shuffle baseline)."""

from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from core.experiments.model import information
from core.experiments.shipped import trace
from core.model.corpus import DOMAINS
from core.model.manifest import shipped_dims as dims
from core.model.trace import RECORD_WINDOW
from core.model.usage import Specialisation, domain_usage
from tabs.figure import FigureResult, brief, lab_figure
from tabs.palette import ROLE

# Normal mode's axes (left, bottom, width, height as figure fractions): the heat map with its
# domain labels, its colour bar and label, then the information bars with theirs.
BOXES = {"heat": (0.071, 0.114, 0.473, 0.778), "colorbar": (0.568, 0.153, 0.0137, 0.700),
         "bars": (0.700, 0.114, 0.296, 0.778)}


def _place(fig) -> None:
    heat, bars, cbar = fig.axes
    cbar.set_box_aspect(None)  # BOXES gives it its shape
    for ax, name in ((heat, "heat"), (bars, "bars"), (cbar, "colorbar")):
        ax.set_position(BOXES[name])


def _bars(ax, s: Specialisation, layer: int, d) -> None:
    x = np.arange(d.n_layers)
    w = 0.38
    colours = [ROLE["mla"] if kind == "mla" else ROLE["kda"] for kind in d.layer_kinds]
    edges = [ROLE["reference"] if i == layer else c for i, c in enumerate(colours)]
    ax.bar(x - w / 2, s.pick, w, color=colours, alpha=0.35, edgecolor=edges)  # one call a
    ax.bar(x + w / 2, s.top_set, w, color=colours, alpha=0.9, edgecolor=edges)  # series
    for off, null in ((-w / 2, s.pick_shuffled), (w / 2, s.top_set_shuffled)):
        ax.hlines(null, x + off - w / 2, x + off + w / 2, color=ROLE["reference"], lw=1.6)
    ax.axhline(s.entropy, ls="--", color=ROLE["annotation"], lw=0.8)
    ceiling = brief(ax, f"H(domain) = {s.entropy:.2f} bits: the ceiling",
                    f"ceiling H = {s.entropy:.2f}")
    ax.text(d.n_layers - 0.5, s.entropy, ceiling, ha="right", va="bottom", fontsize=7)
    ax.set_xticks(x)
    ax.set_xlim(-0.6, d.n_layers - 0.4)
    ax.set_ylim(0, s.entropy * 1.12)
    ax.set_xlabel("layer (green KDA, blue MLA)")
    ax.set_ylabel("I(domain; routing), bits")
    ax.legend(handles=[Patch(color=ROLE["neutral"], alpha=0.35, label="one pick"),
                       Patch(color=ROLE["neutral"], alpha=0.9, label=f"top-{d.top_k} set"),
                       Line2D([], [], color=ROLE["reference"], lw=1.6,
                              label=brief(ax, "domains shuffled", "shuffled"))],
              loc="center left", fontsize=7)
    ax.set_title(brief(ax, f"What routing says about the domain\n({s.runs} domain runs: a "
                       "noisy estimate)", "Routing vs domain"), fontsize=10)


def model_expert_usage(layer: int) -> FigureResult:
    d, t = dims(), trace()
    usage = domain_usage(t, layer, len(DOMAINS))  # [D, E]
    s = information()
    top = usage.argmax(1)
    # normal mode: fixed positions (what constrained layout found): it cost ~100 ms a redraw
    with lab_figure(3.9, place=_place) as fig:
        heat, bars = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2.0, 1.25]})
        uniform = 100 / d.n_experts
        vmax = max(float(usage.max()) * 100, 2 * uniform)
        im = heat.imshow(usage * 100, aspect="auto", cmap="Greens", vmin=0, vmax=vmax)
        for i, e in enumerate(top):
            heat.text(e, i, f"{usage[i, e] * 100:.0f}", ha="center", va="center", fontsize=8,
                      color="white" if usage[i, e] * 100 > 0.6 * vmax else "black")
        counts = np.bincount(t.domains[t.domains < len(DOMAINS)], minlength=len(DOMAINS))
        heat.grid(False)
        kind = d.layer_kinds[layer].upper()
        # projector: the trace's size and windows are in the lesson
        heat.set_xticks(range(d.n_experts))
        heat.set_yticks(range(len(DOMAINS)), [brief(heat, f"{n}\n({c:,} B)", n)
                                              for n, c in zip(DOMAINS, counts, strict=True)])
        heat.set_xlabel(brief(heat, f"routed expert id (trace: {len(t.tokens):,} held-out "
                              f"bytes, prefill in independent {RECORD_WINDOW}-byte windows)",
                              "routed expert id"))
        heat.set_title(brief(heat, f"Layer {layer} ({kind}): % of each domain's top-{d.top_k} "
                             "picks per expert (top one labelled)",
                             f"Layer {layer} ({kind}): % of picks"), fontsize=10)
        fig.colorbar(im, ax=heat, shrink=0.9,
                     label=brief(heat, f"% of the domain's picks (uniform {uniform:.2f}%)",
                                 f"% (uniform {uniform:.2f}%)"))
        _bars(bars, s, layer, d)
    metrics: dict[str, float | int | str] = {"layer": layer, "tokens": int(len(t.tokens)),
                                             "domain_runs": s.runs,
                                             "domain_entropy_bits": s.entropy}
    for i, name in enumerate(DOMAINS):
        metrics[f"{name}_tokens"] = int(counts[i])
        metrics[f"{name}_top_expert"] = int(top[i])
        metrics[f"{name}_top_share"] = float(usage[i, top[i]])
    metrics["information_bits_this_layer"] = float(s.pick[layer])
    metrics["set_information_bits_this_layer"] = float(s.top_set[layer])
    metrics["set_shuffled_bits_this_layer"] = float(s.top_set_shuffled[layer])
    metrics["information_bits_max_layer"] = int(np.argmax(s.pick))
    return FigureResult(fig, metrics)
