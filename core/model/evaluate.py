"""Held-out bits per byte of the model, on the same windows the baselines are compared over."""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from core.model.model import HybridLM


def windows(data: np.ndarray, context: int, max_windows: int | None = None) -> torch.Tensor:
    """Non-overlapping windows of data (n,) uint8: [W, context] int64 (tail dropped)."""
    n = len(data) // context
    if max_windows is not None:
        n = min(n, max_windows)
    return torch.from_numpy(data[: n * context].astype(np.int64)).view(n, context)


@torch.no_grad()
def model_bpb(model: HybridLM, data: np.ndarray, context: int | None = None,
              max_windows: int | None = None, batch: int = 32) -> float:
    """Mean bits per byte over positions 1..context-1 of each window (position 0 has no past)."""
    context = context or model.dims.context
    w = windows(data, context, max_windows)  # [W, T]
    nats, count = 0.0, 0
    for i in range(0, len(w), batch):
        x = w[i : i + batch]  # [b, T]
        logits = model(x[:, :-1]).logits  # [b, T-1, V]
        nats += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1),
                                reduction="sum").item()
        count += x[:, 1:].numel()
    return nats / count / math.log(2)
