"""The Cache policies tab's experiments: LRU, LFU and Belady replayed over a seeded synthetic
routing trace and over the shipped model's recorded routing, cached per parameter set
(single-flight). Read-only results.

  check_geometry(topk, n_experts)   ParamError unless n_experts >= topk + 1
  trace(tokens, n_experts, topk, skew, persistence, seed)    (tokens * topk, 2) (layer, expert)
                 gets of one layer (core.experts.synthetic_trace)
  capacities(topk, n_keys)   capacities from the floor topk + 1 up to every key resident, at
                 most MAX_POINTS
  curves(tokens, n_experts, topk, skew, persistence, seed)   (capacities, {policy: hit rate at
                 each}, compulsory-miss ceiling) of that trace
  model_requests(tokens)     (the shipped model's gets of its first `tokens` traced tokens in
                 decode order, layers, experts, top-k)
  model_curves(tokens)       ModelCurves: LRU at every capacity (from stack distances, one
                 pass, so its cliff at the shortest reuse distance, (layers - 1) x top-k + 1,
                 is never hidden between two samples), LFU and Belady at a sample of capacities
                 that includes both sides of the cliff
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import ParamError
from core.experiments.flight import single_flight
from core.experiments.shipped import trace as shipped_trace
from core.experts import compulsory_ceiling, hit_rate_curve, synthetic_trace
from core.experts.policies import POLICIES
from core.experts.working_set import lru_cliff, lru_curve, token_working_set
from core.model.trace import request_trace

MAX_POINTS = 24  # capacities replayed per curve: enough for a smooth line, cheap to compute


def check_geometry(topk: int, n_experts: int) -> None:
    if n_experts < topk + 1:
        raise ParamError(f"n_experts must be >= topk + 1 = {topk + 1} for topk = {topk}, "
                         f"got n_experts = {n_experts}")


@single_flight(32)
def trace(tokens: int, n_experts: int, topk: int, skew: float, persistence: float,
          seed: int) -> np.ndarray:
    t = synthetic_trace(tokens, 1, n_experts, topk, skew, persistence, seed)
    t.flags.writeable = False
    return t


def capacities(topk: int, n_keys: int) -> np.ndarray:
    return np.unique(np.linspace(topk + 1, n_keys, MAX_POINTS).round().astype(int))


@single_flight(32)
def curves(tokens: int, n_experts: int, topk: int, skew: float, persistence: float,
           seed: int) -> tuple[np.ndarray, dict[str, np.ndarray], float]:
    tr = trace(tokens, n_experts, topk, skew, persistence, seed)
    caps = capacities(topk, n_experts)
    rates = hit_rate_curve(tr, [int(c) for c in caps], POLICIES)
    return caps, rates, compulsory_ceiling(tr)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCurves:
    tokens: int  # tokens replayed (at most the trace's)
    layers: int  # MoE layers in the trace
    n_experts: int  # experts per layer
    topk: int
    every: np.ndarray  # capacities 1..keys
    lru: np.ndarray  # LRU hit rate at every capacity
    sampled: np.ndarray  # capacities LFU and Belady are replayed at
    rates: dict[str, np.ndarray]  # {"lfu", "belady"} at `sampled`
    ceiling: float

    @property
    def keys(self) -> int:
        return self.layers * self.n_experts

    @property
    def cliff(self) -> int:
        return lru_cliff(self.layers, self.topk)

    @property
    def working_set(self) -> int:
        return token_working_set(self.layers, self.topk)

    def at(self, policy: str, c: int) -> float:
        if policy == "lru":
            return float(self.lru[c - 1])
        return float(self.rates[policy][list(self.sampled).index(c)])


@single_flight(16)
def model_requests(tokens: int) -> tuple[np.ndarray, int, int, int]:
    t = shipped_trace()
    n_tokens, n_layers, topk = t.chosen.shape
    reqs = request_trace(t)[: min(tokens, n_tokens) * n_layers * topk]  # token, layer, rank
    reqs.flags.writeable = False
    return reqs, n_layers, t.n_experts, topk


@single_flight(16)
def model_curves(tokens: int) -> ModelCurves:
    reqs, n_layers, n_experts, topk = model_requests(tokens)
    keys = n_layers * n_experts
    every = np.arange(1, keys + 1)
    cliff, ws = lru_cliff(n_layers, topk), token_working_set(n_layers, topk)
    sampled = np.unique(np.concatenate([capacities(topk, keys), [cliff - 1, cliff, ws, keys // 2]]))
    rates = hit_rate_curve(reqs, [int(c) for c in sampled], ("lfu", "belady"))
    return ModelCurves(tokens=len(reqs) // (n_layers * topk), layers=n_layers, n_experts=n_experts,
                       topk=topk, every=every, lru=lru_curve(reqs, every), sampled=sampled,
                       rates=rates, ceiling=compulsory_ceiling(reqs))
