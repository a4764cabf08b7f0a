"""Seeded synthetic routing traces with popularity skew and token-to-token persistence.

With i.i.d. routing LRU collapses to about capacity / experts and every policy looks alike;
real routers are skewed (a few hot experts per layer) and temporally correlated (a token
reuses many of the previous token's experts). Each (token, layer) picks `topk` distinct
experts: each of the previous token's experts at that layer is kept with probability
`persistence`, the rest are drawn without replacement from a Zipf-like popularity
p(rank r) ~ 1 / (r + 1)^skew over a per-layer random ranking (Gumbel top-k).
`repeats_previous` measures persistence back from a trace.
"""

from __future__ import annotations

import numpy as np

from core.errors import ParamError, check_float, check_int


def zipf_popularity(n_experts: int, skew: float) -> np.ndarray:
    """Probability of the expert at each popularity rank: (n_experts,) float64, sums to 1."""
    w = 1.0 / np.arange(1, n_experts + 1, dtype=np.float64) ** skew
    return w / w.sum()


def synthetic_trace(
    n_tokens: int,
    n_layers: int,
    n_experts: int,
    topk: int,
    skew: float,
    persistence: float,
    seed: int,
) -> np.ndarray:
    """(n_tokens * n_layers * topk, 2) int32 (layer, expert) pairs, token-major request order."""
    n_tokens = check_int("n_tokens", n_tokens, 1, 10_000_000)
    n_layers = check_int("n_layers", n_layers, 1, 4096)
    n_experts = check_int("n_experts", n_experts, 1, 1 << 16)
    topk = check_int("topk", topk, 1, n_experts)
    skew = check_float("skew", skew, 0.0, 4.0)
    persistence = check_float("persistence", persistence, 0.0, 1.0)
    seed = check_int("seed", seed, 0)
    rng = np.random.default_rng(seed)
    rank_of = np.argsort(rng.random((n_layers, n_experts)), axis=1)  # (L, E) rank per expert
    logp = np.log(zipf_popularity(n_experts, skew))[rank_of]  # (L, E)
    rows = np.arange(n_layers)[:, None]
    out = np.empty((n_tokens, n_layers, topk, 2), np.int32)
    out[..., 0] = np.arange(n_layers, dtype=np.int32)[None, :, None]
    prev = None
    for tok in range(n_tokens):
        score = logp - np.log(-np.log(rng.random((n_layers, n_experts))))  # Gumbel: (L, E)
        if prev is not None and persistence > 0:
            keep = rng.random((n_layers, topk)) < persistence  # (L, k)
            score[rows, prev] = np.where(keep, np.inf, score[rows, prev])
        top = np.argpartition(-score, topk - 1, axis=1)[:, :topk]  # (L, k) unordered
        top = np.take_along_axis(top, np.argsort(-score[rows, top], axis=1, kind="stable"), 1)
        out[tok, :, :, 1] = top
        prev = top
    return out.reshape(-1, 2)


def repeats_previous(ids: np.ndarray) -> np.ndarray:
    """Which of each token's experts the previous token also chose, for one layer's routing.

    ids: [T, k] expert ids per token. Returns [T, k] bool; row 0 is all False. Its mean over
    rows 1.. is the measured persistence (at least `persistence`: a fresh draw may repeat too).
    """
    a = np.asarray(ids)
    if a.ndim != 2:
        raise ParamError(f"ids must be a (tokens, topk) array, got shape {a.shape}")
    kept = np.zeros(a.shape, bool)
    kept[1:] = (a[1:, :, None] == a[:-1, None, :]).any(-1)  # (T - 1, k)
    return kept
