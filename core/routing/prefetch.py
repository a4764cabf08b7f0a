"""Next-layer prefetch: predict layer L+1's experts while layer L runs, load the cold ones.

Predictors of layer L+1's experts for the token being decoded (PREDICTORS):
  previous  the experts layer L+1 used for the previous token (after a prefill: its last row)
  pilot     colibri's PILOT: layer L+1's post-attention RMSNorm and router applied to layer L's
            post-attention hidden state (the residual stream after L's mixer, before L's own
            norm), top `width` by score, ties to the lower id. The state is tapped with a
            forward pre-hook on layer L's norm2 while the Prefetcher is open.
  oracle    the recorded future: the experts layer L+1 used at this step of a recorded run
            with the same routing and no prefetch. Exact for placement-blind routing (stock);
            for cache-aware routing the prefetch itself moves residency, so the run it
            predicts may choose differently, and recall can fall below 1.
When: after layer L's experts were consumed (their leases still protect them), for decode
tokens only (one row; prefill rows are skipped, as PILOT skips batches) and for L+1 < n_layers
(layer 0 of the next token is never predicted). What: the non-resident predictions go to one
ExpertCache.get_many (origin "prefetch"). A prefetch changes placement, never which experts
are used: with placement-blind routing the output is bit for bit the same as without it.
Unlike colibri there is no eviction guard: a prefetch may evict an expert the next layer needs,
which shows up as waste and lost hits.

Meters per layer: recall = correct / used (recall@width of the used set), precision = correct
/ predicted, what was issued and loaded, the device bytes of those loads, and what became of
the loads, read from the cache's own per-event classification (its event log, drained at
every token): `useful` (a get consumed it: a prefetched hit) and `wasted` (evicted before any
get). Summed over layers they are the cache's hits_prefetched and prefetch_wasted for the
prefetcher's loads; the wasted bytes are the cache's CacheStats.wasted_bytes (a load's device
bytes depend on its alignment in the shard, so they are not a multiple of the count). `issues` keeps
(reads, device bytes) of every get_many, so lateness can be modelled under any disk preset
(core.routing.arm_report).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from core.errors import ParamError, check_choice, check_int
from core.routing.ranking import top_ranks

if TYPE_CHECKING:
    from core.experts import ExpertCache
    from core.model.model import HybridLM
    from core.model.router import Routing

PREDICTORS = ("previous", "pilot", "oracle")
Recording = list[list[tuple[int, ...]]]  # [decode step][layer] -> the ids that layer used


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefetchMeters:
    """One layer's (or, summed, every layer's) prefetch record over a decode."""

    predictions: int  # decode steps with a prediction for this layer
    predicted: int  # ids predicted
    used: int  # distinct ids the layer then used
    correct: int  # predicted and used
    issued: int  # non-resident predictions sent to get_many
    loaded: int  # of those, published
    device_bytes: int  # bytes those loads transferred
    useful: int  # loads a later get consumed (prefetched hits)
    wasted: int  # loads evicted before any get

    @classmethod
    def from_row(cls, row: Sequence[int]) -> PrefetchMeters:
        """The record whose fields, in declaration order, are row (a trace's layer_prefetch
        row, a Prefetcher's counters)."""
        return cls(**dict(zip(cls.__dataclass_fields__, row, strict=True)))

    @property
    def recall(self) -> float:
        return self.correct / self.used if self.used else 0.0

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 0.0


def total(meters: tuple[PrefetchMeters, ...] | list[PrefetchMeters]) -> PrefetchMeters:
    """Every layer's meters summed."""
    return PrefetchMeters(**{f: sum(getattr(m, f) for m in meters)
                             for f in PrefetchMeters.__dataclass_fields__})


class Prefetcher:
    """Predicts and loads layer L+1's experts; driven by a provider's routed/consumed hooks."""

    def __init__(self, predictor: str, cache: ExpertCache, model: HybridLM,
                 width: int | None = None, future: Recording | None = None) -> None:
        self.predictor = check_choice("predictor", predictor, PREDICTORS)
        d = model.dims
        self.width = check_int("width", d.top_k if width is None else width, 1, d.n_experts)
        if predictor == "oracle" and future is None:
            raise ParamError("predictor 'oracle' needs the recorded future (future=...)")
        self.cache, self.model, self.future = cache, model, future
        self.n_layers = d.n_layers
        self._x: dict[int, torch.Tensor] = {}  # layer -> its post-attention state [B, T, D]
        self._hooks = []
        if predictor == "pilot":
            for i, b in enumerate(model.blocks):
                self._hooks.append(b.norm2.register_forward_pre_hook(self._tap(i)))
        self._prev: dict[int, tuple[int, ...]] = {}
        self._pending: dict[int, frozenset[int]] = {}
        self._n = [[0] * 9 for _ in range(self.n_layers)]  # PrefetchMeters fields per layer
        self.issues: list[tuple[int, int]] = []  # (reads, device bytes) per get_many
        self._seq = cache.seq  # events already seen

    def _tap(self, layer: int):
        def hook(_module: torch.nn.Module, args: tuple[torch.Tensor, ...]) -> None:
            self._x[layer] = args[0].detach()

        return hook

    def close(self) -> None:
        """Remove the PILOT taps (the model is left as it was)."""
        for h in self._hooks:
            h.remove()
        self._hooks.clear()

    def __enter__(self) -> Prefetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def predict(self, step: int, layer: int) -> tuple[int, ...] | None:
        """Layer `layer`'s predicted experts at decode step `step` (None: no prediction)."""
        if self.predictor == "previous":
            return self._prev.get(layer)
        if self.predictor == "oracle":
            if step >= len(self.future) or layer >= len(self.future[step]):
                return None
            return self.future[step][layer]
        x = self._x.get(layer - 1)
        if x is None:
            return None
        block = self.model.blocks[layer]
        with torch.no_grad():  # NOTE: .forward, so the taps on norm2 do not fire here
            h = block.norm2.forward(x[:, -1])  # [B, D]
            scores = block.moe.router.forward(h).softmax(-1)  # [B, E]
        return tuple(top_ranks(scores, self.width)[0].tolist())

    def drain(self) -> None:
        """Count the cache's hit_prefetched and waste events since the last drain, per layer.

        Only slots this prefetcher loaded have origin "prefetch" (warm() loads are "warm").
        """
        events = self.cache.events(self._seq)
        if events and events[0].seq != self._seq + 1:
            raise RuntimeError(f"the cache's event log dropped events {self._seq + 1}.."
                               f"{events[0].seq - 1} before they were counted")
        for ev in events:
            if ev.origin == "prefetch" and ev.op in ("hit_prefetched", "waste"):
                self._n[ev.layer][7 if ev.op == "hit_prefetched" else 8] += 1
            self._seq = ev.seq

    def observe(self, step: int, layer: int, routing: Routing) -> None:
        """Layer `layer` chose its experts (provider.routed): score the prediction made for it."""
        if layer == 0:
            self.drain()  # a token's events are far fewer than the log keeps
        used = frozenset(routing.ids[-1].tolist())
        pred = self._pending.pop(layer, None)
        if pred is not None and routing.ids.shape[0] == 1:
            n = self._n[layer]
            n[2] += len(used)
            n[3] += len(pred & used)
        self._prev[layer] = tuple(routing.ids[-1].tolist())

    def after(self, step: int, layer: int, routing: Routing) -> None:
        """Layer `layer` is done (provider.consumed): predict layer + 1 and load its cold ones."""
        nxt = layer + 1
        if routing.ids.shape[0] != 1 or nxt >= self.n_layers:
            return
        pred = self.predict(step, nxt)
        if pred is None:
            return
        pred = tuple(dict.fromkeys(pred))
        self._pending[nxt] = frozenset(pred)
        n = self._n[nxt]
        n[0] += 1
        n[1] += len(pred)
        cold = [e for e in pred if self.cache.resident(nxt, e) is None]
        if not cold:
            return
        before = self.cache.stats().device_bytes
        loaded = self.cache.get_many(nxt, cold)
        moved = self.cache.stats().device_bytes - before
        n[4] += len(cold)
        n[5] += loaded
        n[6] += moved
        self.issues.append((loaded, moved))

    def meters(self) -> tuple[PrefetchMeters, ...]:
        """PrefetchMeters per layer so far (layer 0 is never predicted: all zeros)."""
        self.drain()
        return tuple(PrefetchMeters.from_row(n) for n in self._n)
