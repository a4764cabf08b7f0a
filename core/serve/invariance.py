"""How often a request's text depends on what shares its batch: measured, never assumed.

`measure(model, prompts, n_new, batches)` serves every prompt on an Engine at each batch size B
(max_batch = B, every prompt submitted at once, so B of them run in each step) and compares
each request's text with its solo text: the same engine, kernels and routing serving that
request alone. For a request that differs it records the first differing byte and, when routing
is stock, the top-2 logit margin of the solo run at that byte (how near a tie flipped); for
every batch size, the largest difference of any request's prompt logits from its solo ones
(the bits can move without a byte changing).
  invariant=True   the default kernels (core/model/kernels.py): no text may differ
  invariant=False  torch's fastest kernels: a row's bits move with the batch by ~1e-6, enough to
                   flip an argmax whose top two logits are that close
  routing=True     cache-aware routing (max_rank J = 1 M = 8 over an ExpertCache of `capacity`
                   slots, shared by the batch): a request's experts, and so its text, follow
                   what its co-tenants made resident, by design; the solo run has a fresh cache
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from core.errors import ParamError, check_int
from core.model.kernels import FAST, INVARIANT
from core.model.model import HybridLM
from core.model.providers import CacheProvider, open_cache
from core.model.weights import ASSET_DIR
from core.routing.config import RouteConfig
from core.routing.policy import RoutePolicy
from core.serve.engine import Engine
from core.serve.reports import GenerateReport

ROUTE = RouteConfig("max_rank", k=2, J=1, M=8)  # as the Serve tab's "cache-aware routing on"
POOL_PAGES = 2048


@dataclass(frozen=True, slots=True, kw_only=True)
class Divergence:
    request: int  # index into the prompts
    byte: int  # the first byte that differs from the solo text
    margin: float | None  # the solo run's top-2 logit gap at that byte (None: routed)


@dataclass(frozen=True, slots=True, kw_only=True)
class InvarianceRow:
    batch: int
    requests: int
    differ: tuple[Divergence, ...]
    max_logit_diff: float  # max |prompt's last logits - solo's| over the requests

    @property
    def same(self) -> int:
        return self.requests - len(self.differ)


def _serve(model: HybridLM, prompts: Sequence[bytes], n_new: int, batch: int, invariant: bool,
           routing: bool, capacity: int, directory: Path) -> list[GenerateReport]:
    d = model.dims
    cache = open_cache(directory, d, capacity) if routing else None
    try:
        provider = CacheProvider(cache, RoutePolicy(ROUTE, d.n_layers)) if routing else None
        eng = Engine(model, POOL_PAGES, prefix_cache=False, provider=provider,
                     max_batch=batch, invariant=invariant)
        return eng.generate_many(prompts, n_new)
    finally:
        if cache is not None:
            cache.close()


def _margin(model: HybridLM, prompt: bytes, text: bytes, at: int, invariant: bool) -> float:
    idx = torch.tensor([list(prompt + text[:at])])  # [1, T]
    with torch.no_grad():
        logits = model(idx, kernels=INVARIANT if invariant else FAST).logits[0, -1]  # [V]
    top = logits.topk(2).values
    return float(top[0] - top[1])


def measure(model: HybridLM, prompts: Sequence[bytes], n_new: int,
            batches: Sequence[int] = (1, 2, 4, 8, 16), *, invariant: bool = False,
            routing: bool = False, capacity: int = 32, directory: str | Path = ASSET_DIR
            ) -> tuple[InvarianceRow, ...]:
    """One row per batch size (module docstring)."""
    if not isinstance(model, HybridLM):
        raise ParamError(f"model must be a HybridLM, got {type(model).__name__}")
    if not prompts:
        raise ParamError("prompts must hold at least one prompt")
    n_new = check_int("n_new", n_new, 1, 1024)
    batches = [check_int("batch", b, 1, 256) for b in batches]
    capacity = check_int("capacity", capacity, model.dims.top_k + 1,
                         model.dims.n_layers * model.dims.n_experts)
    directory = Path(directory)
    solo = [_serve(model, [p], n_new, 1, invariant, routing, capacity, directory)[0]
            for p in prompts]
    rows = []
    for b in batches:
        reports = _serve(model, prompts, n_new, b, invariant, routing, capacity, directory)
        differ, worst = [], 0.0
        for i, (r, s) in enumerate(zip(reports, solo, strict=True)):
            delta = (r.prefill.last_logits - s.prefill.last_logits).abs().max()
            worst = max(worst, float(delta))
            if r.text != s.text:
                at = next(j for j, (x, y) in enumerate(zip(r.text, s.text, strict=True))
                          if x != y)
                margin = None if routing else _margin(model, prompts[i], s.text, at, invariant)
                differ.append(Divergence(request=i, byte=at, margin=margin))
        rows.append(InvarianceRow(batch=b, requests=len(prompts), differ=tuple(differ),
                                  max_logit_diff=worst))
    return tuple(rows)
