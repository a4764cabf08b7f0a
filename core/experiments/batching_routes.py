"""Routing under batching, teacher-forced: how many experts a step activates and what each
routing costs in quality, against batch size.

`measure_routes(model, texts, method, slots)` steps B held-out texts in lockstep through
HybridLM.step (B rows per layer call, default kernels), byte by byte as the routing tab's
teacher-forced pass does (core.routing.quality), under one routing method:
  stock        the true top-k
  cache_aware  max_rank (J = 1, M = 8) over one ExpertCache of `slots` slots the batch shares,
               cold at the start: a resident expert replaces a cold one in a row's window
               (core.routing.RoutePolicy)
  batch_aware  max_rank (J = 1, M = 8) preferring the experts earlier rows of the same step
               chose (core.routing.batch_aware), every expert resident
and records per step the distinct experts of each layer, and per row and position the NLL of
the true next byte (nats) and the argmax. The stock pass is the reference: delta NLL = mean
NLL - stock's over the same texts, agreement = the fraction of positions whose argmax is
stock's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from core.errors import ParamError, check_choice, check_int
from core.model.model import HybridLM
from core.model.providers import AllResident, CacheProvider, ExpertProvider, open_cache
from core.model.weights import ASSET_DIR
from core.routing.batch_aware import BatchAwarePolicy
from core.routing.config import RouteConfig
from core.routing.policy import RoutePolicy

METHODS = ("stock", "cache_aware", "batch_aware")
J, M = 1, 8  # the routing tab's default window (max_rank): the top expert sacred, ranks < 8


@dataclass(frozen=True, slots=True, kw_only=True)
class Forced:
    nll: np.ndarray  # [B, T - 1] float64 nats: row b, position t predicts byte t + 1
    argmax: np.ndarray  # [B, T - 1] int64
    union: np.ndarray  # [T - 1, L] int64: distinct experts of each layer call


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteRow:
    batch: int
    method: str
    union: float  # mean distinct experts per layer per step
    nll: float  # mean NLL per byte, nats
    delta_nll: float  # nll - stock's nll (0.0 for stock)
    agree: float  # fraction of positions whose argmax is stock's

    def to_json(self) -> dict:
        return {"batch": self.batch, "method": self.method, "union": self.union, "nll": self.nll,
                "delta_nll": self.delta_nll, "agree": self.agree}

    @classmethod
    def from_json(cls, d: dict) -> RouteRow:
        return cls(**d)


def route_config(model: HybridLM) -> RouteConfig:
    return RouteConfig("max_rank", k=model.dims.top_k, J=J, M=M)


@torch.no_grad()
def forced(model: HybridLM, texts: Sequence[bytes], provider: ExpertProvider | None) -> Forced:
    """B texts of one length in lockstep, one byte a step (module docstring)."""
    if not texts or len({len(t) for t in texts}) != 1 or len(texts[0]) < 2:
        raise ParamError("texts must be at least one text, all of one length >= 2")
    B, T = len(texts), len(texts[0])
    ids = torch.tensor([list(t) for t in texts])  # [B, T]
    state = model.new_state(B)
    nll, top, union = [], [], []
    rows = torch.arange(B)
    for t in range(T - 1):
        out = model.step(ids[:, t], state, provider)
        logp = out.logits.double().log_softmax(-1)  # [B, V]
        nll.append((-logp[rows, ids[:, t + 1]]).numpy())
        top.append(out.logits.argmax(-1).numpy())
        union.append([len(r.order) for r in out.routing])
    return Forced(nll=np.stack(nll, 1), argmax=np.stack(top, 1).astype(np.int64),
                  union=np.array(union, dtype=np.int64))


def run_method(model: HybridLM, texts: Sequence[bytes], method: str, slots: int,
               directory: str | Path = ASSET_DIR) -> Forced:
    """The texts under one method (module docstring)."""
    check_choice("method", method, METHODS)
    d = model.dims
    if method == "stock":
        return forced(model, texts, None)
    if method == "batch_aware":
        stacks = [(b.moe.w1, b.moe.w2, b.moe.w3) for b in model.blocks]
        return forced(model, texts, AllResident(stacks, BatchAwarePolicy(route_config(model))))
    cache = open_cache(Path(directory), d, check_int("slots", slots, d.top_k + 1,
                                                     d.n_layers * d.n_experts))
    try:
        policy = RoutePolicy(route_config(model), d.n_layers)
        return forced(model, texts, CacheProvider(cache, policy))
    finally:
        cache.close()


def row(batch: int, method: str, run: Forced, stock: Forced) -> RouteRow:
    nll = float(run.nll.mean())
    return RouteRow(batch=batch, method=method, union=float(run.union.mean()), nll=nll,
                    delta_nll=nll - float(stock.nll.mean()),
                    agree=float((run.argmax == stock.argmax).mean()))


def measure_routes(model: HybridLM, texts: Sequence[bytes], slots: int,
                   directory: str | Path = ASSET_DIR) -> tuple[RouteRow, ...]:
    """One row per method for len(texts) rows in lockstep, stock first."""
    stock = run_method(model, texts, "stock", slots, directory)
    return tuple(row(len(texts), m, stock if m == "stock" else
                     run_method(model, texts, m, slots, directory), stock) for m in METHODS)
