"""Expert usage from a routing trace: per domain and layer, and how much routing says about
the domain (mutual information), for the Model tab. The training record is read here too."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from core.errors import check_int
from core.model.trace import RoutingTrace
from core.model.weights import ASSET_DIR


def domain_usage(trace: RoutingTrace, layer: int, n_domains: int) -> np.ndarray:
    """[n_domains, E]: the share of each domain's expert slots (top-k picks) going to each expert;
    rows sum to 1 (a row with no tokens is all zero)."""
    L = trace.chosen.shape[1]
    layer = check_int("layer", layer, 0, L - 1)
    counts = np.zeros((n_domains, trace.n_experts), np.float64)
    known = trace.domains < n_domains  # [N]
    ids = trace.chosen[known, layer, :].astype(np.int64)  # [N', k]
    dom = np.repeat(trace.domains[known].astype(np.int64), ids.shape[1])  # [N' * k]
    np.add.at(counts, (dom, ids.reshape(-1)), 1.0)
    totals = counts.sum(1, keepdims=True)
    return np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)


def domain_information(trace: RoutingTrace, n_domains: int) -> np.ndarray:
    """[L]: mutual information I(domain; expert pick) in bits per layer, over every top-k pick.
    0 = routing ignores the domain; log2(n_domains) = the pick identifies the domain."""
    out = []
    for layer in range(trace.chosen.shape[1]):
        usage = domain_usage(trace, layer, n_domains)  # p(e | d)
        known = trace.domains < n_domains
        p_d = np.bincount(trace.domains[known], minlength=n_domains) / known.sum()  # [D]
        joint = usage * p_d[:, None]  # p(d, e)
        p_e = joint.sum(0, keepdims=True)  # [1, E]
        ratio = np.divide(joint, p_d[:, None] * p_e, out=np.ones_like(joint), where=joint > 0)
        out.append(float((joint * np.log2(ratio)).sum()))
    return np.array(out)


def training_record(directory: Path = ASSET_DIR) -> tuple[list[dict], dict]:
    """(curve points, eval summary) written by `python -m core.model.train`."""
    curve = json.loads((directory / "curve.json").read_text())["points"]
    summary = json.loads((directory / "eval.json").read_text())
    return curve, summary
