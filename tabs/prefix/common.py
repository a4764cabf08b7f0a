"""The Prefix cache tab's engine runs, cached per parameter set, and the words for each stop."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache

import torch

from core.prefix import entries as E
from core.serve.engine import KDA_CHUNK, Engine
from core.serve.scenarios import (
    CACHED,
    DOCUMENT,
    PRESETS,
    PresetRun,
    cold_logits,
    request_of,
    run_preset,
    serve_cached,
    time_saved,
)
from core.serve.sweep import SpacingSweep, spacing_sweep
from tabs.model.common import model

__all__ = ["CACHED", "MAX_LOOKUP_STEPS", "PRESETS", "REASON_WORDS", "SHARED", "SPACINGS", "base",
           "runs", "sweep", "sweep_ready",
           "time_saved_now"]

SPACINGS = tuple(range(1, 9))  # the hero's range: a checkpoint group every k blocks
SHARED = len(DOCUMENT)  # tokens the hit / fallback / partial requests share with CACHED
# Lookup steps never exceed one per block walked (stage 1) plus one per boundary checked on the
# way back (stage 2); a block is at least one KDA chunk of byte tokens.
MAX_LOOKUP_STEPS = 2 * (max(len(request_of(p)) for p in PRESETS) // KDA_CHUNK) + 1

# Why the reusable prefix is not longer, in a student's words (one entry per core REASON).
REASON_WORDS = {
    E.HIT: "the deepest matched boundary has a complete, ready checkpoint group",
    E.SHORT: "the prompt is shorter than one block: nothing to hash",
    E.MISS: "the first block's hash is not in the cache",
    E.NO_CHECKPOINT: "the deepest matched boundary holds no checkpoint group (spacing)",
    E.NOT_READY: "the deepest matched boundary's group was published this step: not ready yet",
    E.PARTIAL: "the deepest matched boundary's group lacks a KDA layer: resuming from it "
               "would be wrong",
    E.EVICTED: "the deepest matched boundary's group was evicted under memory pressure",
    E.LAST_TOKEN: "the prompt ends at the deepest matched boundary: one token must still run "
                  "for the next logits",
}
assert set(REASON_WORDS) == set(E.REASONS)


# NOTE: two figures redraw at once after a hero move; one lock makes the second wait for the
# first's engine run instead of repeating it on the other core.
_ENGINE_LOCK = threading.RLock()


def base(checkpoint_every: int) -> Engine:
    """Read-only: an engine that has served CACHED. Scenarios fork it; nothing serves on it."""
    with _ENGINE_LOCK:
        return _base(checkpoint_every)


@lru_cache(maxsize=len(SPACINGS))
def _base(checkpoint_every: int) -> Engine:
    return serve_cached(model(), checkpoint_every)


@lru_cache(maxsize=4)
def _cold(prompt: bytes) -> torch.Tensor:
    return cold_logits(model(), prompt)


def runs(checkpoint_every: int) -> dict[str, PresetRun]:
    """Read-only: every preset at this spacing."""
    with _ENGINE_LOCK:
        return _runs(checkpoint_every)


@lru_cache(maxsize=len(SPACINGS))
def _runs(checkpoint_every: int) -> dict[str, PresetRun]:
    return {p: run_preset(model(), p, checkpoint_every, base(checkpoint_every),
                          _cold(request_of(p))) for p in PRESETS}


def sweep() -> SpacingSweep:
    with _ENGINE_LOCK:
        return _sweep()


def sweep_ready() -> bool:
    return _sweep.cache_info().currsize > 0


@lru_cache(maxsize=1)
def _sweep() -> SpacingSweep:
    return spacing_sweep([base(k) for k in SPACINGS], CACHED)


def time_saved_now(checkpoint_every: int, preset: str,
                   on_round: Callable[[int, int], None] | None = None):
    """Measured now (never cached): the preset's prefill, cold vs with the cache."""
    return time_saved(model(), preset, base(checkpoint_every), on_round=on_round)
