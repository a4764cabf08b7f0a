"""Figure: which experts each corpus domain uses in one layer, and how domain-specific routing
is in every layer (mutual information between the domain and the expert pick)."""

from __future__ import annotations

import math

import numpy as np

from core.model.usage import domain_information, domain_usage
from tabs.figure import FigureResult, lab_figure
from tabs.model.common import DOMAINS, dims, trace
from tabs.palette import ROLE


def model_expert_usage(layer: int) -> FigureResult:
    d, t = dims(), trace()
    usage = domain_usage(t, layer, len(DOMAINS))  # [D, E]
    info = domain_information(t, len(DOMAINS))  # [L]
    top = usage.argmax(1)
    with lab_figure(3.9) as fig:
        heat, bars = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2.3, 1]})
        uniform = 100 / d.n_experts
        vmax = max(float(usage.max()) * 100, 2 * uniform)
        im = heat.imshow(usage * 100, aspect="auto", cmap="Greens", vmin=0, vmax=vmax)
        for i, e in enumerate(top):
            heat.text(e, i, f"{usage[i, e] * 100:.0f}", ha="center", va="center", fontsize=8,
                      color="white" if usage[i, e] * 100 > 0.6 * vmax else "black")
        heat.set_xticks(range(d.n_experts))
        heat.set_yticks(range(len(DOMAINS)), DOMAINS)
        heat.set_xlabel("routed expert id")
        heat.grid(False)
        heat.set_title(f"Layer {layer} ({d.layer_kinds[layer].upper()}): % of each domain's top-"
                       f"{d.top_k} picks per expert (top expert labelled)")
        fig.colorbar(im, ax=heat, label=f"% of the domain's picks (uniform {uniform:.2f}%)",
                     shrink=0.9)
        colours = [ROLE["mla"] if k.upper() == "MLA" else ROLE["kda"] for k in d.layer_kinds]
        alphas = [1.0 if i == layer else 0.45 for i in range(d.n_layers)]
        for i, (v, c, a) in enumerate(zip(info, colours, alphas, strict=True)):
            bars.bar(i, v, color=c, alpha=a, edgecolor=ROLE["reference"] if i == layer else c)
        bars.axhline(math.log2(len(DOMAINS)), ls="--", color=ROLE["annotation"], lw=0.8)
        bars.text(d.n_layers - 0.5, math.log2(len(DOMAINS)), "pick names the domain",
                  ha="right", va="bottom", fontsize=7)
        bars.set_xticks(range(d.n_layers))
        bars.set_xlim(-0.6, d.n_layers - 0.4)
        bars.set_ylim(0, math.log2(len(DOMAINS)) * 1.15)
        bars.set_xlabel("layer (green KDA, blue MLA)")
        bars.set_ylabel("I(domain; expert pick), bits")
        bars.set_title("Specialisation per layer")
    metrics: dict[str, float | int | str] = {"layer": layer, "tokens": int(len(t.tokens))}
    for i, name in enumerate(DOMAINS):
        metrics[f"{name}_top_expert"] = int(top[i])
        metrics[f"{name}_top_share"] = float(usage[i, top[i]])
    metrics["information_bits_this_layer"] = float(info[layer])
    metrics["information_bits_max_layer"] = int(np.argmax(info))
    return FigureResult(fig, metrics)
