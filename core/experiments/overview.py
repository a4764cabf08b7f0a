"""The Overview tab's experiment: one request's path through the lab, recorded from one real
run of the engine.

serve_path(model, kind, draft_len, capacity, warm, clusters) serves prompt(kind) (held-out
corpus text, core.serve.prompts) on an Engine with a prefix cache, pages and an ExpertCache
of `capacity` slots over the shipped shards, and records each stage the request passes:
  prompt    its bytes (the model reads bytes: one token each)
  prefix    the two-stage lookup. warm: an earlier request (the prompt's full blocks, nothing
            more) was served first on the same engine and expert cache, so the lookup finds its
            blocks and checkpoint group; cold: the engine is fresh
  prefill   tokens computed; KDA_CHUNK-token chunks per KDA layer (the chunked form); the
            request's pages by kind after the prefill (KDA state: fixed; MLA latents: growing)
  experts   per layer and expert, the picks (token x top-k choices) of the prefill and of the
            decode, and per layer the experts fetched and loaded from disk (the cache's misses)
  decode    plain greedy (draft_len 0: one pass per byte after the first, which the prefill
            emits) or speculative: verify passes,
            drafts accepted, positions replayed, bytes held and moved for rollback, expert loads
            made for drafted positions, MLA pages grown and released
  fleet     the consistent-hash ring over `clusters` clusters routes the request by its first
            block's chained hash (the key every request starting with the same block shares):
            its primary cluster and, should that one fail, the secondary
Every field is a count or a byte size: deterministic for the same parameters. No wall times.
`drafter` replaces the engine's prompt-lookup drafter (overview_drafts.py: drafts that are
always right).

path(draft_len, kind, capacity, warm, clusters)   the tab's request on the shipped model, N_NEW
          bytes (core.experiments.scenes), read-only: served once per (draft_len, kind,
          capacity, warm) and routed once per fleet size (single-flight: both figures redrawn
          at once share one engine run)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from core.errors import ParamError, check_int
from core.experiments.engine import MAX_NEW
from core.experiments.flight import single_flight
from core.experiments.scenes import MAX_CLUSTERS, N_NEW
from core.experiments.shipped import model as shipped_model
from core.fleet.config import DEMO_SIM
from core.fleet.ring import ConsistentHashRing, hash64
from core.model.manifest import ASSET_DIR
from core.model.model import HybridLM
from core.model.providers import CacheProvider, ExpertProvider, Triple, open_cache
from core.model.router import Routing
from core.paging.ledger import toy_geometry
from core.prefix.hashing import block_hashes
from core.serve.drafter import Drafter
from core.serve.engine import Engine
from core.serve.limits import KDA_CHUNK, MAX_DRAFT
from core.serve.live import PAGE
from core.serve.prompts import MAX_PROMPT, prompt
from core.serve.reports import GenerateReport, PoolUsage, PrefillReport

VNODES = DEMO_SIM.vnodes  # the fleet ring's virtual nodes per cluster, as the simulator's
PHASES = ("prefill", "decode")


class _Recorder(ExpertProvider):
    """Wraps a CacheProvider: per phase, the picks per (layer, expert) and the cache's misses
    per layer. Exposes `cache` so the engine's speculative steps attribute loads too."""

    def __init__(self, inner: CacheProvider, n_layers: int, n_experts: int) -> None:
        self.inner, self.cache, self.policy = inner, inner.cache, None
        self.E = n_experts
        self.picks = np.zeros((len(PHASES), n_layers, n_experts), np.int64)
        self.fetched = np.zeros((len(PHASES), n_layers), np.int64)
        self.loads = np.zeros((len(PHASES), n_layers), np.int64)
        self.phase: int | None = None  # None: not recording (the warm-up request)
        self.seen = self.cache.seq

    def experts(self, layer: int, ids: Sequence[int]) -> Iterator[tuple[int, Triple]]:
        yield from self.inner.experts(layer, ids)
        if self.phase is not None:
            self.fetched[self.phase, layer] += len(ids)

    def resident(self, layer: int, n_experts: int) -> torch.Tensor:
        return self.inner.resident(layer, n_experts)

    def routed(self, layer: int, routing: Routing) -> None:
        if self.phase is not None:
            ids = routing.ids.reshape(-1).numpy()
            self.picks[self.phase, layer] += np.bincount(ids, minlength=self.E)
        self.inner.routed(layer, routing)

    def consumed(self, layer: int, routing: Routing) -> None:
        self.inner.consumed(layer, routing)
        events = self.cache.events(self.seen)
        if events:
            self.seen = events[-1].seq
        if self.phase is not None:
            for e in events:
                if e.op == "miss":
                    self.loads[self.phase, e.layer] += 1


@dataclass(frozen=True, kw_only=True)
class RequestPath:
    """Every stage of one request, as counts (see the module docstring)."""

    kind: str
    prompt: bytes
    text: bytes  # generated
    draft_len: int
    capacity: int  # expert cache slots
    warm: bool
    # prefix
    block_tokens: int
    full_blocks: int
    matched_blocks: int  # stage one: consecutive block hashes found
    boundary_blocks: int  # stage two: the deepest complete, ready checkpoint group
    reason: str  # why reuse stops where it does (core.prefix.entries.REASONS)
    reused_tokens: int
    published_blocks: int
    published_groups: int
    # prefill
    computed_tokens: int
    kda_chunks: int  # KDA_CHUNK-token chunks of the computed tokens, per KDA layer
    layer_kinds: tuple[str, ...]
    prefill_pages: PoolUsage
    # experts: [phase][layer][expert] picks; [phase][layer] fetched / loaded
    picks: tuple[tuple[tuple[int, ...], ...], ...]
    fetched: tuple[tuple[int, ...], ...]
    loads: tuple[tuple[int, ...], ...]
    # decode
    passes: int  # decode passes: one per byte after the first plain, one per window speculative
    drafted: int
    accepted: int
    replayed: int
    held_bytes: int  # replay inputs held, summed over passes
    snapshot_bytes: int  # what per-position snapshots would have held
    moved_bytes: int  # read + written by rollbacks (VerifyStep.replay_moved)
    draft_loads: int  # expert loads first needed by a drafted position
    rejected_loads: int  # ... by a rejected one (wasted)
    pages_grown: int
    pages_released: int
    final_pages: PoolUsage
    # fleet
    clusters: int
    key: bytes  # the first block's chained hash
    ring_position: float  # hash64(key) / 2**64
    primary: int
    secondary: int | None

    def load_total(self, phase: str) -> int:
        return int(sum(self.loads[PHASES.index(phase)]))

    def fetched_total(self, phase: str) -> int:
        return int(sum(self.fetched[PHASES.index(phase)]))

    def routed(self, clusters: int) -> RequestPath:
        """The same request routed over a fleet of `clusters` clusters instead."""
        primary, secondary = fleet_route(self.key, clusters)
        return replace(self, clusters=clusters, primary=primary, secondary=secondary)

    @property
    def hit_rate(self) -> float:
        """Decode: fetched experts already resident, over every fetch."""
        f = self.fetched_total("decode")
        return 1.0 - self.load_total("decode") / f if f else 0.0


def pool_pages(model: HybridLM) -> int:
    """A pool for one request of the largest size, plus as much again for the prefix cache."""
    return 2 * toy_geometry(model.dims, PAGE).pages(MAX_PROMPT + MAX_NEW + MAX_DRAFT + 1)


def fleet_route(key: bytes, clusters: int) -> tuple[int, int | None]:
    ring = ConsistentHashRing(range(check_int("clusters", clusters, 1, MAX_CLUSTERS)), VNODES)
    primary, secondary = ring.route(key)
    return int(primary), None if secondary is None else int(secondary)


def serve_path(model: HybridLM, kind: str, draft_len: int, capacity: int, warm: bool,
               clusters: int, n_new: int = 48, directory: str | Path = ASSET_DIR, *,
               drafter: Drafter | None = None) -> RequestPath:
    if not isinstance(model, HybridLM):
        raise ParamError(f"model must be a HybridLM, got {type(model).__name__}")
    d = model.dims
    text = prompt(kind)
    draft_len = check_int("draft_len", draft_len, 0, MAX_DRAFT)
    capacity = check_int("capacity", capacity, d.top_k + 1, d.n_layers * d.n_experts)
    if not isinstance(warm, bool):
        raise ParamError(f"warm must be true or false, got {warm!r}")
    clusters = check_int("clusters", clusters, 1, MAX_CLUSTERS)
    n_new = check_int("n_new", n_new, 2, MAX_NEW)
    engine = Engine(model, pool_pages(model), tokens_per_page=PAGE, prefix_cache=True,
                    drafter=drafter)
    cache = open_cache(directory, d, capacity)
    try:
        rec = _Recorder(CacheProvider(cache), d.n_layers, d.n_experts)
        engine.provider = rec
        full = len(text) // PAGE * PAGE
        if warm and full:
            engine.generate(text[:full], 1)  # an earlier request: the prompt's full blocks
        rec.phase = 0
        pre: PrefillReport | None = None
        report: GenerateReport | None = None
        for ev in engine.stream(text, n_new, draft_len):
            if isinstance(ev, PrefillReport):
                pre, rec.phase = ev, 1
            elif isinstance(ev, GenerateReport):
                report = ev
        engine.check()
    finally:
        cache.close()
    assert pre is not None and report is not None and pre.lookup is not None
    key = block_hashes(text, PAGE)[0]
    primary, secondary = fleet_route(key, clusters)
    steps, spec = report.verify, report.spec
    return RequestPath(
        kind=kind, prompt=text, text=report.text, draft_len=draft_len, capacity=capacity,
        warm=warm, block_tokens=PAGE, full_blocks=pre.lookup.full_blocks,
        matched_blocks=pre.lookup.stage1_blocks, boundary_blocks=pre.lookup.boundary_blocks,
        reason=pre.lookup.reason, reused_tokens=pre.reused_tokens,
        published_blocks=pre.published_blocks, published_groups=pre.published_groups,
        computed_tokens=pre.computed_tokens,
        kda_chunks=-(-pre.computed_tokens // KDA_CHUNK), layer_kinds=d.layer_kinds,
        prefill_pages=pre.pages,
        picks=tuple(tuple(tuple(int(x) for x in row) for row in ph) for ph in rec.picks),
        fetched=tuple(tuple(int(x) for x in ph) for ph in rec.fetched),
        loads=tuple(tuple(int(x) for x in ph) for ph in rec.loads),
        passes=len(steps) if spec is not None else len(report.steps),
        drafted=spec.drafted if spec else 0, accepted=spec.accepted if spec else 0,
        replayed=spec.replayed if spec else 0, held_bytes=spec.replay_bytes if spec else 0,
        snapshot_bytes=spec.snapshot_bytes if spec else 0,
        moved_bytes=sum(s.replay_moved for s in steps),
        draft_loads=spec.loads.drafted if spec else 0,
        rejected_loads=spec.loads.rejected_drafts if spec else 0,
        pages_grown=sum(s.pages_grown for s in steps),
        pages_released=sum(s.pages_released for s in steps), final_pages=report.pages,
        clusters=clusters, key=key, ring_position=hash64(key) / 2**64, primary=primary,
        secondary=secondary)


def path(draft_len: int, kind: str, capacity: int, warm: bool, clusters: int) -> RequestPath:
    return _routed(_served(draft_len, kind, capacity, warm), clusters)


@single_flight(32)
def _served(draft_len: int, kind: str, capacity: int, warm: bool) -> RequestPath:
    return serve_path(shipped_model(), kind, draft_len, capacity, warm, clusters=1, n_new=N_NEW)


@single_flight(64)
def _routed(run: RequestPath, clusters: int) -> RequestPath:
    return run.routed(clusters)
