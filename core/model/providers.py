"""Where routed experts come from: every expert resident, or streamed through the ExpertCache.

A provider is the MoE's view of expert placement. It yields (expert, (w1, w2, w3)) for one
layer's experts in the order asked; the MoE uses each triple at once, before asking for the
next, so a cache of top_k + 1 slots suffices. It also says which experts are resident (one
snapshot per layer call), may carry a selection policy (cache-aware routing reads placement,
so the policy travels with the placement it reads; None is stock top-k), and is told when a
layer has been routed and when its experts were consumed (hooks for telemetry and prefetch;
no-ops here). Tensor names follow a checkpoint template, so the cache that serves the fixture
serves the model: `model.layers.{layer}.mlp.experts.{expert}.{w1|w2|w3}.weight`, float32,
w1/w3 [I, D], w2 [D, I].
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from core.experts import ExpertCache, ExpertLayout, ShardIndex, slot_stride
from core.model.router import Routing, SelectionPolicy

if TYPE_CHECKING:
    from core.model.config import ModelDims

MODEL_TEMPLATE = "model.layers.{layer}.mlp.experts.{expert}.{w}.{part}"
MODEL_LAYOUT = ExpertLayout(
    template=MODEL_TEMPLATE,
    parts=(("w1", "weight"), ("w2", "weight"), ("w3", "weight")),
    short_names=("w1", "w2", "w3"),
    mxfp4=False,
)
Triple = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


class ExpertProvider(ABC):
    # How the MoE chooses its experts from the router's scores (core.model.router.SelectionPolicy);
    # None: stock top-k, the code path the shipped weights were trained and tested with.
    policy: SelectionPolicy | None = None

    @abstractmethod
    def experts(self, layer: int, ids: Sequence[int]) -> Iterator[tuple[int, Triple]]:
        """Yield (expert, (w1, w2, w3)) for each id in order.

        A triple is valid until the next one is requested; callers use it at once.
        """

    def resident(self, layer: int, n_experts: int) -> torch.Tensor:
        """bool [n_experts]: which of the layer's experts are in memory now (a snapshot).

        Default: every one (a provider that holds all its experts).
        """
        return torch.ones(n_experts, dtype=torch.bool)

    def routed(self, layer: int, routing: Routing) -> None:  # noqa: B027 (optional hook)
        """The layer chose its experts; none has been fetched yet. Default: nothing."""

    def consumed(self, layer: int, routing: Routing) -> None:  # noqa: B027 (optional hook)
        """Every expert the layer chose was used; the next layer has not run. Default: nothing."""


class AllResident(ExpertProvider):
    """Every expert in memory: w1, w2, w3 stacks [E, ...] per layer (the MoE's own parameters)."""

    def __init__(self, stacks: Sequence[Triple], policy: SelectionPolicy | None = None) -> None:
        self.stacks = list(stacks)
        self.policy = policy

    def experts(self, layer: int, ids: Sequence[int]) -> Iterator[tuple[int, Triple]]:
        w1, w2, w3 = self.stacks[layer]
        for e in ids:
            yield e, (w1[e], w2[e], w3[e])


class CacheProvider(ExpertProvider):
    """Experts through an ExpertCache: a demand batch (get_many(..., demand=True)) of up to
    top_k ids, then get each, in order. Resident: what the cache holds READY right now."""

    def __init__(self, cache: ExpertCache, policy: SelectionPolicy | None = None) -> None:
        self.cache = cache
        self.policy = policy

    def experts(self, layer: int, ids: Sequence[int]) -> Iterator[tuple[int, Triple]]:
        k = self.cache.topk
        for i in range(0, len(ids), k):
            chunk = list(ids[i : i + k])
            self.cache.begin_layer()  # earlier triples were consumed: release their leases
            # compat mode reproduces upstream, which has no demand batches
            self.cache.get_many(layer, chunk, demand=self.cache.compat is None)
            for e in chunk:
                w1, w2, w3 = self.cache.get(layer, e).torch()
                yield e, (w1, w2, w3)

    def resident(self, layer: int, n_experts: int) -> torch.Tensor:
        held = [self.cache.resident(layer, e) is not None for e in range(n_experts)]
        return torch.tensor(held, dtype=torch.bool)  # [E]


def slot_bytes(dims: ModelDims) -> int:
    """ExpertCache's slot stride for one of the model's experts (core.experts.slot_stride)."""
    return slot_stride(dims.expert_bytes)


def open_cache(directory: str | Path, dims: ModelDims, capacity: int, **kw: object
               ) -> ExpertCache:
    """An ExpertCache of `capacity` slots over the model's shards in `directory`."""
    index = ShardIndex.open(directory)
    return ExpertCache(index, dims.n_layers, dims.n_experts, dims.top_k,
                       capacity * slot_bytes(dims), layout=MODEL_LAYOUT, **kw)


def expert_tensors(stacks: Sequence[Triple]) -> dict[str, np.ndarray]:
    """Checkpoint names -> float32 arrays for every routed expert."""
    out: dict[str, np.ndarray] = {}
    for layer, triple in enumerate(stacks):
        for e in range(triple[0].shape[0]):
            for i, w in enumerate(triple):
                name = MODEL_LAYOUT.name(layer, e, i)
                out[name] = w[e].detach().to(torch.float32).contiguous().numpy()
    return out
