"""The Prefix cache tab's experiment: prefix-cache scenarios on a real Engine, a cached prompt
then one request, recorded (the prompts and presets: core.experiments.scenes).

Every preset first serves CACHED (a shared document plus a first question) through an Engine
with checkpoints every `checkpoint_every` blocks, then prepares the cache and serves one
request:
  hit       REQUEST shares the document's first 8 blocks with CACHED: stage 1 walks them,
            stage 2 resumes from the deepest complete, ready checkpoint group
  miss      OTHER shares nothing: the first block's hash is not in the cache
  fallback  as hit, but memory pressure first evicted the cache's least recently used entries
            (whole groups, tail first) until the group the request would use was gone: it
            falls back to the last checkpoint still held
  partial   as hit, but the group the request would use lost one KDA layer (a publish that
            was not all or nothing): the safe lookup backs off past it; the unsafe one
            (check_groups=False) resumes from it and its logits leave the cold run's
Each request is served with the safe lookup and, on an identical fork, with check_groups=False
(only where that lookup picks another boundary: otherwise it is the same arithmetic); both last
logits are compared with a cold HybridLM.forward of the request.

The tab's runs on the shipped model, cached per parameter set (single-flight: two figures
redrawn at once share one engine run):
  base(checkpoint_every)   an engine that has served CACHED (read-only: scenarios fork it)
  runs(checkpoint_every)   {preset: PresetRun} at that spacing (read-only)
  time_saved_now(checkpoint_every, preset, on_round)   measured now, never cached: TimeSaved
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from core.errors import ParamError, check_choice, check_int
from core.experiments.flight import single_flight
from core.experiments.scenes import CACHED, PRESETS, REQUEST, SPACINGS, request_of
from core.experiments.shipped import model as shipped_model
from core.model.model import HybridLM
from core.paging.pool import PageKind
from core.prefix.entries import LookupResult
from core.serve.engine import Engine
from core.serve.reports import PoolUsage
from core.tolerances import max_abs

POOL_PAGES = 400
BROKEN_LAYER = 0  # the KDA layer a partial group lacks


@dataclass(frozen=True, slots=True, kw_only=True)
class PresetRun:
    """One request served after CACHED, as the lookup saw it and as the logits came out."""

    preset: str
    checkpoint_every: int
    block_tokens: int
    cached: LookupResult  # CACHED's own blocks and groups as the cache holds them, just before
    cached_full_blocks: int  # full blocks CACHED published (before any eviction)
    request: bytes
    lookup: LookupResult  # the safe two-stage lookup of the request
    unsafe: LookupResult  # the same request with check_groups=False
    reused_tokens: int
    computed_tokens: int
    unsafe_reused_tokens: int
    max_abs_safe: float  # max |engine last logits - cold HybridLM.forward|
    max_abs_unsafe: float
    evicted_entries: int  # cache entries evicted by the fallback preset's memory pressure
    group_pages: int  # KDA_STATE pages the cache held when the request arrived
    pages: PoolUsage  # after the request's prefill

    @property
    def request_tokens(self) -> int:
        return len(self.request)


def serve_cached(model: HybridLM, checkpoint_every: int) -> Engine:
    """A fresh engine that has served CACHED (callers fork it; they never serve on it)."""
    eng = Engine(model, POOL_PAGES, checkpoint_every=checkpoint_every)
    eng.prefill(CACHED)
    return eng


def fork(eng: Engine) -> Engine:
    """An independent copy of an engine's pool and prefix cache (the model is shared)."""
    return copy.deepcopy(eng, {id(eng.model): eng.model})


def deepest_group(eng: Engine, prompt: bytes) -> bytes | None:
    """The digest of the deepest checkpoint group the engine's prefix cache holds for
    prompt (None when it holds none)."""
    r = eng.cache.lookup(prompt)
    return eng.cache.hashes(prompt)[r.boundary_blocks - 1] if r.boundary_blocks else None


def _evict_until_gone(eng: Engine, digest: bytes) -> int:
    """Memory pressure: free one LRU entry at a time until the group `digest` is evicted."""
    n, cache = 0, eng.cache
    while digest in cache.groups:
        if not cache.make_room(cache.pool.num_free + 1):  # evicts exactly one entry
            raise RuntimeError("nothing left to evict, and the group is still cached")
        n += 1
    return n


def drop_layer(eng: Engine, digest: bytes, layer: int) -> None:
    """Fault injection: the group at `digest` loses one KDA layer's pages (a partial group)."""
    # NOTE: PrefixCache has no public way to break a published group; this mirrors
    # tests/core/serve/test_engine.py (free the layer's pages, mark the layer unwritten).
    group = eng.cache.groups[digest]
    eng.pool.free(list(group.layers[layer]))
    group.layers = tuple(None if i == layer else p for i, p in enumerate(group.layers))


def prepare(base: Engine, preset: str) -> tuple[Engine, int]:
    """A fork of `base` set up for `preset` (eviction or a broken group); entries evicted."""
    eng, evicted = fork(base), 0
    target = deepest_group(eng, REQUEST)
    if target is not None and preset == "fallback":
        evicted = _evict_until_gone(eng, target)
    elif target is not None and preset == "partial":
        drop_layer(eng, target, BROKEN_LAYER)
    eng.check()
    return eng, evicted


@torch.no_grad()
def cold_logits(model: HybridLM, prompt: bytes) -> torch.Tensor:
    """[V]: the oracle, one HybridLM.forward of the whole prompt with no cache at all."""
    return model(torch.tensor([list(prompt)], dtype=torch.long)).logits[0, -1]


def run_preset(model: HybridLM, preset: str, checkpoint_every: int,
               base: Engine | None = None, cold: torch.Tensor | None = None) -> PresetRun:
    """Serve the preset's request after CACHED, safely and unsafely, against a cold run.

    base: an engine from serve_cached (forked, never changed); cold: the request's cold last
    logits if already computed (cold_logits(model, request_of(preset)))."""
    preset = str(check_choice("preset", preset, PRESETS))
    k = check_int("checkpoint_every", checkpoint_every, 1, 1 << 20)
    base = base if base is not None else serve_cached(model, k)
    if base.checkpoint_every != k:
        raise ParamError(f"base must serve checkpoint_every={k}, got {base.checkpoint_every}")
    prompt = request_of(preset)
    cold = cold if cold is not None else cold_logits(model, prompt)
    eng, evicted = prepare(base, preset)
    cached = eng.cache.lookup(CACHED + b"\x00")
    group_pages = eng.cache.held_pages()[PageKind.KDA_STATE]
    unsafe_lookup = eng.cache.lookup(prompt, check_groups=False)
    same = unsafe_lookup.boundary_blocks == eng.cache.lookup(prompt).boundary_blocks
    safe = eng.prefill(prompt)
    # NOTE: the same boundary on identical engines is the same arithmetic: run it once
    unsafe = safe if same else prepare(base, preset)[0].prefill(prompt, check_groups=False)
    return PresetRun(
        preset=preset, checkpoint_every=k, block_tokens=base.P,
        cached=cached, cached_full_blocks=len(CACHED) // base.P, request=prompt,
        lookup=safe.lookup, unsafe=unsafe_lookup, reused_tokens=safe.reused_tokens,
        computed_tokens=safe.computed_tokens, unsafe_reused_tokens=unsafe.reused_tokens,
        max_abs_safe=max_abs(safe.last_logits, cold),
        max_abs_unsafe=max_abs(unsafe.last_logits, cold), evicted_entries=evicted,
        group_pages=group_pages, pages=safe.pages)


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeSaved:
    """Measured wall time of the request's prefill: cold (no cache) vs after the preset."""

    cold_seconds: float  # best of `repeat`
    reuse_seconds: float  # best of `repeat`
    reused_tokens: int
    computed_tokens: int
    repeat: int

    @property
    def saved_seconds(self) -> float:
        return self.cold_seconds - self.reuse_seconds


def time_saved(model: HybridLM, preset: str, base: Engine, repeat: int = 3,
               on_round: Callable[[int, int], None] | None = None) -> TimeSaved:
    """Time the preset's request (safe lookup) on forks of `base` and on a cache-off engine;
    `on_round(done, repeat)` is called before each round and once at the end (progress)."""
    preset = str(check_choice("preset", preset, PRESETS))
    repeat = check_int("repeat", repeat, 1, 50)
    prompt = request_of(preset)
    cold, warm, report = [], [], None
    for i in range(repeat):
        if on_round is not None:
            on_round(i, repeat)
        off = Engine(model, POOL_PAGES, prefix_cache=False)
        t0 = time.perf_counter()
        off.prefill(prompt)
        cold.append(time.perf_counter() - t0)
        eng, _ = prepare(base, preset)
        t0 = time.perf_counter()
        report = eng.prefill(prompt)
        warm.append(time.perf_counter() - t0)
    if on_round is not None:
        on_round(repeat, repeat)
    return TimeSaved(cold_seconds=min(cold), reuse_seconds=min(warm),
                     reused_tokens=report.reused_tokens, computed_tokens=report.computed_tokens,
                     repeat=repeat)


@single_flight(len(SPACINGS))
def base(checkpoint_every: int) -> Engine:
    return serve_cached(shipped_model(), checkpoint_every)


@single_flight(len(PRESETS))
def _cold(prompt: bytes) -> torch.Tensor:
    return cold_logits(shipped_model(), prompt)


@single_flight(len(SPACINGS))
def runs(checkpoint_every: int) -> dict[str, PresetRun]:
    return {p: run_preset(shipped_model(), p, checkpoint_every, base(checkpoint_every),
                          _cold(request_of(p))) for p in PRESETS}


def lookup_steps(checkpoint_every: int, preset: str) -> int:
    """Steps of the preset's two-stage lookup as the tab steps through it: stage 1 one per
    block walked (the hits, then the block that stopped the walk, if any), stage 2 one per
    boundary checked backing off from the deepest match to where the prefill resumes."""
    r = runs(checkpoint_every)[preset]
    full, s1, b = r.request_tokens // r.block_tokens, r.lookup.stage1_blocks, \
        r.lookup.boundary_blocks
    return min(full, s1 + 1) + (s1 - max(b, 1) + 1 if s1 else 0)


def time_saved_now(checkpoint_every: int, preset: str,
                   on_round: Callable[[int, int], None] | None = None) -> TimeSaved:
    return time_saved(shipped_model(), preset, base(checkpoint_every), on_round=on_round)
