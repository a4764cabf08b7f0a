"""Expert usage from a routing trace: per domain and layer, and how much routing says about
the domain (mutual information), for the Model tab. The training record is read here too.

Information is measured two ways per layer, always over tokens whose domain is known:
  per pick   I(domain; one expert pick), every top-k pick an observation (k per token)
  per set    I(domain; the token's whole top-k set), one observation per token
Neither can exceed H(domain), the entropy of the trace's own domain mix (log2 of the number of
domains only when they are equally common). Plug-in estimates from a finite trace are biased
upwards (a set has E-choose-k values, so a few thousand tokens leave most cells thin); the
shuffle baseline is the same estimate with the domain labels randomly permuted over tokens
(seeded), i.e. what routing that ignores the domain would score. Tokens are not independent:
a trace of a few long domain runs (domain_runs) measures passages as much as domains.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.errors import check_int
from core.model.trace import RoutingTrace
from core.model.weights import ASSET_DIR

SHUFFLE_DRAWS = 20


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


def mutual_information(x: np.ndarray, y: np.ndarray) -> float:
    """Plug-in I(X; Y) in bits of paired non-negative integer samples x [n], y [n]."""
    _, xi = np.unique(x, return_inverse=True)
    _, yi = np.unique(y, return_inverse=True)
    joint = np.zeros((xi.max(initial=-1) + 1, yi.max(initial=-1) + 1))
    np.add.at(joint, (xi, yi), 1.0)
    if joint.sum() == 0:
        return 0.0
    joint /= joint.sum()
    indep = joint.sum(1, keepdims=True) * joint.sum(0, keepdims=True)  # p(x) p(y)
    nz = joint > 0
    return float((joint[nz] * np.log2(joint[nz] / indep[nz])).sum())


def entropy(x: np.ndarray) -> float:
    """Plug-in H(X) in bits of non-negative integer samples x [n]."""
    p = np.bincount(np.asarray(x, np.int64)) / max(len(x), 1)
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


def _known(trace: RoutingTrace, n_domains: int) -> tuple[np.ndarray, np.ndarray]:
    """(domains [N'], chosen [N', L, k]) of the tokens whose domain is known."""
    known = trace.domains < n_domains
    return trace.domains[known].astype(np.int64), trace.chosen[known].astype(np.int64)


def _set_codes(chosen: np.ndarray, n_experts: int) -> np.ndarray:
    """[N, L]: one integer per token and layer naming its unordered top-k set."""
    ids = np.sort(chosen, axis=-1)  # [N, L, k]
    weights = n_experts ** np.arange(ids.shape[-1] - 1, -1, -1, dtype=np.int64)  # [k]
    return (ids * weights).sum(-1)


def _pick_mi(dom: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    k = chosen.shape[-1]
    return np.array([mutual_information(np.repeat(dom, k), chosen[:, li].reshape(-1))
                     for li in range(chosen.shape[1])])


def _set_mi(dom: np.ndarray, codes: np.ndarray) -> np.ndarray:
    return np.array([mutual_information(dom, codes[:, li]) for li in range(codes.shape[1])])


def domain_information(trace: RoutingTrace, n_domains: int) -> np.ndarray:
    """[L]: mutual information I(domain; expert pick) in bits per layer, over every top-k pick.
    0 = routing ignores the domain; H(domain) = the pick identifies the domain."""
    return _pick_mi(*_known(trace, n_domains))


def set_information(trace: RoutingTrace, n_domains: int) -> np.ndarray:
    """[L]: I(domain; the token's top-k set) in bits per layer, one observation per token."""
    dom, chosen = _known(trace, n_domains)
    return _set_mi(dom, _set_codes(chosen, trace.n_experts))


def domain_entropy(trace: RoutingTrace, n_domains: int) -> float:
    """H(domain) in bits over the known tokens: the most any routing can say about it."""
    return entropy(_known(trace, n_domains)[0])


def domain_runs(trace: RoutingTrace) -> int:
    """Maximal stretches of equal domain label along the trace (0 for an empty trace)."""
    d = trace.domains
    return int(len(d) > 0) + int(np.count_nonzero(d[1:] != d[:-1]))


@dataclass(frozen=True, slots=True, kw_only=True)
class Specialisation:
    """How much each layer's routing says about the domain, with its ceiling and null."""

    entropy: float  # H(domain), bits
    runs: int  # domain runs along the trace
    tokens: int  # tokens with a known domain
    pick: np.ndarray  # [L] I(domain; one pick)
    top_set: np.ndarray  # [L] I(domain; top-k set)
    pick_shuffled: np.ndarray  # [L] the same with domain labels permuted (mean over draws)
    top_set_shuffled: np.ndarray  # [L]


def specialisation(trace: RoutingTrace, n_domains: int, draws: int = SHUFFLE_DRAWS,
                   seed: int = 0) -> Specialisation:
    """Per-layer information with H(domain) and a shuffle baseline over `draws` permutations."""
    draws = check_int("draws", draws, 1, 10_000)
    dom, chosen = _known(trace, n_domains)
    codes = _set_codes(chosen, trace.n_experts)  # [N', L]
    rng = np.random.default_rng(seed)
    perms = [rng.permutation(dom) for _ in range(draws)]
    return Specialisation(
        entropy=entropy(dom), runs=domain_runs(trace), tokens=len(dom),
        pick=_pick_mi(dom, chosen), top_set=_set_mi(dom, codes),
        pick_shuffled=np.mean([_pick_mi(p, chosen) for p in perms], 0),
        top_set_shuffled=np.mean([_set_mi(p, codes) for p in perms], 0),
    )


def training_record(directory: Path = ASSET_DIR) -> tuple[list[dict], dict]:
    """(curve points, eval summary) written by `python -m core.model.train`."""
    curve = json.loads((directory / "curve.json").read_text())["points"]
    summary = json.loads((directory / "eval.json").read_text())
    return curve, summary
