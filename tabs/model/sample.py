"""Figure: a short greedy sample from the shipped model, each byte tinted by the expert the
selected layer routed it to (top-1), computed live and cached per prompt and length."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np

from core.errors import check_choice
from core.experiments.model import PROMPTS, greedy_sample
from core.model.corpus import DOMAINS
from core.model.manifest import shipped_dims as dims
from tabs.figure import FigureResult, lab_figure
from tabs.palette import ROLE

COLS = 64
EXPERT_COLOURS = mpl.colormaps["tab20"].colors


def _char(b: int) -> str:
    if b == 10:
        return "↵"
    return chr(b) if 32 <= b < 127 else "·"


def _layout(text: bytes) -> list[tuple[int, int]]:
    """(row, column) of each byte: COLS to a row, and a new row after every newline, so code
    keeps its lines and indentation."""
    pos, r, c = [], 0, 0
    for b in text:
        if c == COLS:
            r, c = r + 1, 0
        pos.append((r, c))
        r, c = (r + 1, 0) if b == 10 else (r, c + 1)
    return pos


def model_sample(layer: int, domain: str, sample_len: int) -> FigureResult:
    d = dims()
    domain = str(check_choice("domain", domain, DOMAINS))
    prompt = PROMPTS[domain]
    out, top1 = greedy_sample(domain, sample_len)
    where = _layout(prompt + out)
    rows = where[-1][0] + 1
    with lab_figure(1.0 + 0.3 * rows) as fig:
        ax = fig.subplots()
        ax.set_xlim(0, COLS)
        ax.set_ylim(rows, 0)
        ax.axis("off")
        ax.set_title(f"Greedy sample after the {domain} prompt (grey): {len(out)} generated "
                     f"bytes, each tinted by layer {layer}'s top-1 expert for it", fontsize=10)
        for i, (b, (r, c)) in enumerate(zip(prompt + out, where, strict=True)):
            generated = i >= len(prompt)
            expert = int(top1[i - len(prompt), layer]) if generated else -1
            face = EXPERT_COLOURS[expert % len(EXPERT_COLOURS)] if generated else "#FFFFFF"
            ax.add_patch(mpl.patches.Rectangle((c, r + 0.08), 1, 0.84, facecolor=face,
                                               edgecolor="none", alpha=0.55))
            ax.text(c + 0.5, r + 0.5, _char(b), ha="center", va="center", fontsize=10,
                    family="DejaVu Sans Mono",
                    color=ROLE["reference"] if generated else ROLE["neutral"])
    used = np.unique(top1[:, layer])
    metrics = {
        "domain": domain,
        "layer": layer,
        "sample": out.decode("latin-1"),
        "experts_used_in_layer": len(used),
        "n_experts": d.n_experts,
    }
    return FigureResult(fig, metrics)
