"""What the MoE's router hands to whoever places and chooses experts.

Routing: one layer's routing for N tokens (the router's scores, the chosen ids and weights,
the experts in the order they were fetched); an ExpertProvider is told of it before and
after the layer's experts run. SelectionPolicy: what a provider may carry to choose experts
from the router's scores and its residency in place of stock top-k (core.routing.RoutePolicy).
Both sit below core.model.moe (which produces Routing and calls the policy) and
core.model.providers (which receives Routing and carries the policy).
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import torch


class Routing(NamedTuple):
    """One layer's routing for N tokens."""

    scores: torch.Tensor  # [N, E] softmax over experts
    ids: torch.Tensor  # [N, k] int64, chosen experts in descending score
    weights: torch.Tensor  # [N, k] renormalised top-k scores
    order: tuple[int, ...]  # experts in the order they were fetched (the layer's demand)


class SelectionPolicy(Protocol):
    def select(self, layer: int, scores: torch.Tensor, resident: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """scores [N, E], resident bool [E] -> (ids [N, k] int64, weights [N, k], rows sum to 1)."""
        ...
