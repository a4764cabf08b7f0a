"""Held-out bits per byte of the model, and side by side with the baselines per domain.

The model is scored on non-overlapping windows of its context, at positions 1..context-1 of
each window (position 0 has no past). The unigram and bigram baselines are averaged over
exactly those positions; zlib compresses each domain's held-out bytes as one string.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from core.errors import check_int
from core.model.corpus_baselines import bigram_bits, unigram_bits, zlib_bpb
from core.model.corpus_documents import DOMAINS, Corpus
from core.model.model import HybridLM


def window_starts(n: int, context: int, max_windows: int | None = None,
                  spread: bool = False) -> np.ndarray:
    """Starts of non-overlapping windows in n bytes: the first max_windows, or with spread
    max_windows evenly spaced over all of them (every one when max_windows is None)."""
    total = n // context
    count = total if max_windows is None else min(total, check_int("max_windows", max_windows, 1))
    picks = np.linspace(0, total - 1, count).round().astype(np.int64) if spread else (
        np.arange(count))
    return picks * context


def windows(data: np.ndarray, context: int, max_windows: int | None = None,
            spread: bool = False) -> torch.Tensor:
    """Non-overlapping windows of data (n,) uint8: [W, context] int64 (tail dropped)."""
    starts = window_starts(len(data), context, max_windows, spread)
    idx = starts[:, None] + np.arange(context)  # [W, T]
    return torch.from_numpy(data[idx].astype(np.int64)).view(len(starts), context)


@torch.no_grad()
def model_bits(model: HybridLM, x: torch.Tensor, batch: int = 32) -> torch.Tensor:
    """x [W, T] int64 -> bits [W, T-1] float64 of predicting x[:, 1:] from the past."""
    out = []
    for i in range(0, len(x), batch):
        w = x[i : i + batch]  # [b, T]
        logits = model(w[:, :-1]).logits  # [b, T-1, V]
        nats = F.cross_entropy(logits.transpose(1, 2), w[:, 1:], reduction="none")  # [b, T-1]
        out.append(nats.double() / math.log(2))
    return torch.cat(out) if out else torch.zeros(0, x.shape[1] - 1, dtype=torch.float64)


@torch.no_grad()
def model_bpb(model: HybridLM, data: np.ndarray, context: int | None = None,
              max_windows: int | None = None, batch: int = 32, spread: bool = False) -> float:
    """Mean bits per byte over positions 1..context-1 of each window (position 0 has no past)."""
    context = context or model.dims.context
    w = windows(data, context, max_windows, spread)  # [W, T]
    nats, count = 0.0, 0
    for i in range(0, len(w), batch):
        x = w[i : i + batch]  # [b, T]
        logits = model(x[:, :-1]).logits  # [b, T-1, V]
        nats += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1),
                                reduction="sum").item()
        count += x[:, 1:].numel()
    return nats / count / math.log(2)


def domain_report(model: HybridLM, corpus: Corpus, max_windows: int | None = None,
                  batch: int = 32) -> dict[str, dict[str, float]]:
    """Per domain (and "all"): scored positions, held-out bytes, and bits per byte of the model,
    unigram, bigram (same positions as the model) and zlib (the domain's held-out bytes)."""
    T = model.dims.context
    starts = window_starts(len(corpus.heldout), T, max_windows, spread=True)
    pos = (starts[:, None] + np.arange(1, T)).reshape(-1)  # scored positions
    model_b = model_bits(model, windows(corpus.heldout, T, max_windows, True), batch).numpy()
    rows = {"model": model_b.reshape(-1),
            "unigram": unigram_bits(corpus.train, corpus.heldout)[pos],
            "bigram": bigram_bits(corpus.train, corpus.heldout)[pos]}
    dom = corpus.heldout_domains[pos]
    out: dict[str, dict[str, float]] = {}
    for di, name in [*enumerate(DOMAINS), (None, "all")]:
        sel = np.ones(len(pos), bool) if di is None else dom == di
        held = corpus.heldout if di is None else corpus.heldout[corpus.heldout_domains == di]
        if not sel.any():
            continue
        out[name] = {"positions": int(sel.sum()), "bytes": int(len(held)),
                     **{f"{k}_bpb": round(float(v[sel].mean()), 4) for k, v in rows.items()},
                     "zlib_bpb": round(zlib_bpb(held), 4)}
    return out
