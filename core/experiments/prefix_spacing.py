"""Checkpoint spacing vs reusable tokens vs memory: the prefix cache's staircase, measured.

For each engine (one per checkpoint spacing k, each having served the same prompt), probe the
cache with requests that share the first s tokens of that prompt and then diverge, for every
s on a grid: stage 1 matches floor(s / P) blocks, stage 2 keeps the deepest multiple of k
below that (a staircase of step P * k), and the checkpoint groups that make it possible hold
pages of the same pool. Probes are read-only lookups: the engines are not changed.

sweep()   the Prefix cache tab's staircase: every spacing of SPACINGS (its engines:
          core.experiments.prefix.base) probed with CACHED, computed once (single-flight: the
          app's background warm-up and a first draw share it); sweep.ready() says whether it
          is cached already
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.errors import ParamError, check_int
from core.experiments.flight import single_flight
from core.experiments.prefix import base
from core.experiments.scenes import CACHED, SPACINGS
from core.paging.pool import PageKind
from core.serve.engine import Engine


@dataclass(frozen=True, slots=True, kw_only=True)
class SpacingPoint:
    """One spacing: what its cache holds and what each probe could reuse."""

    checkpoint_every: int
    group_pages: int  # KDA_STATE pages held by checkpoint groups
    block_pages: int  # MLA_KV pages held by cached blocks
    groups: int  # checkpoint groups held
    reusable: tuple[int, ...]  # tokens reusable (stage 2), one per probe
    matched: tuple[int, ...]  # tokens of matched blocks (stage 1), one per probe

    @property
    def mean_reusable(self) -> float:
        return sum(self.reusable) / len(self.reusable)

    @property
    def mean_lost(self) -> float:
        """Tokens stage 1 matched that stage 2 could not reuse, on average over the probes."""
        return sum(m - r for m, r in zip(self.matched, self.reusable, strict=True)) / len(
            self.matched)


@dataclass(frozen=True, slots=True, kw_only=True)
class SpacingSweep:
    prompt_tokens: int
    block_tokens: int
    pool_pages: int
    shared: tuple[int, ...]  # probe s shares the first s tokens of the prompt
    points: tuple[SpacingPoint, ...]

    def point(self, checkpoint_every: int) -> SpacingPoint:
        for p in self.points:
            if p.checkpoint_every == checkpoint_every:
                return p
        raise ParamError(f"checkpoint_every must be one of "
                         f"{[p.checkpoint_every for p in self.points]}, got {checkpoint_every}")


def probe(prompt: bytes, shared: int) -> bytes:
    """The first `shared` bytes of prompt, then one byte that differs from prompt[shared]."""
    nxt = prompt[shared] ^ 1 if shared < len(prompt) else 0
    return prompt[:shared] + bytes([nxt])


def spacing_point(eng: Engine, prompt: bytes, shared: Sequence[int]) -> SpacingPoint:
    if eng.cache is None:
        raise ParamError("the engine must have a prefix cache (prefix_cache=True)")
    results = [eng.cache.lookup(probe(prompt, s)) for s in shared]
    held = eng.cache.held_pages()
    return SpacingPoint(checkpoint_every=eng.checkpoint_every, group_pages=held[PageKind.KDA_STATE],
                        block_pages=held[PageKind.MLA_KV], groups=len(eng.cache.groups),
                        reusable=tuple(r.reusable_tokens for r in results),
                        matched=tuple(r.stage1_blocks * r.block_tokens for r in results))


def spacing_sweep(engines: Sequence[Engine], prompt: bytes, step: int = 8) -> SpacingSweep:
    """engines: one per spacing, each having served `prompt` (read-only here)."""
    if not engines:
        raise ParamError("engines must hold at least one served engine")
    step = check_int("step", step, 1, 1 << 16)
    shared = tuple(range(0, len(prompt) + 1, step))
    first = engines[0]
    return SpacingSweep(prompt_tokens=len(prompt), block_tokens=first.P,
                        pool_pages=first.pool.n_pages, shared=shared,
                        points=tuple(spacing_point(e, prompt, shared) for e in engines))


@single_flight(1)
def sweep() -> SpacingSweep:
    return spacing_sweep([base(k) for k in SPACINGS], CACHED)
