"""Scenario presets: scripted, deterministic runs of a real ExpertCache, recorded step by step.

Each preset drives a fixed-mode ExpertCache over the upstream test geometry (one layer of 24
experts of 1,632 B, 12,288-B stride) and returns frozen records for figures: the slot map after
every step, what moved in it, and each counter window's stats (timings dropped).

  prefetch then consume  the seed's probe, then decode: reset, get_many(top-k), get each
  consume one only       batch the top-k, get the top-1 k times (the seed's altered schedule)
  reset window           the next token's batch is issued before reset_stats
  truncated shard        a private copy cut at expert 20's offset after indexing
  pressure               prefill chunks asking for more experts than slots; hottest one pinned
"""

from __future__ import annotations

import functools
import json
import math
import os
import shutil
import tempfile
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np

from core.errors import ParamError, check_choice, check_int
from core.experts.cache import ExpertCache
from core.experts.errors import ExpertLoadError
from core.experts.fixture_store import shared_fixture
from core.experts.layout import K3_LAYOUT, resolve_expert
from core.experts.shards import ShardIndex
from core.experts.synthetic import synthetic_trace

SCENARIOS = (
    "prefetch then consume", "consume one only", "reset window", "truncated shard", "pressure",
)
N_EXPERTS = 24
EXPERT_BYTES = 1_632
STRIDE = 12_288  # round_up(1,632 + 2 x 4096, 4096): a slot count is a budget of slots x STRIDE
GEOMETRY = {"n_layers": 1, "n_experts": N_EXPERTS, "rows": 8, "packed_cols": 64}
MAX_TOPK = 8
MAX_SLOTS = N_EXPERTS
MAX_SCHEDULE = 64
SKEW, PERSISTENCE = 1.0, 0.5  # routing of the scheduled tokens (synthetic_trace)
CHUNK_REQUESTS = 3  # a prefill chunk asks for CHUNK_REQUESTS x slots experts (with repeats)
CUT_EXPERT = 20  # the truncated copy ends at this expert's offset: 20..23 cannot be read


@dataclass(frozen=True, slots=True)
class Cell:
    """One slot after a step."""

    state: str  # EMPTY | INFLIGHT | READY
    expert: int  # -1 when EMPTY
    origin: str | None  # demand | prefetch | warm
    consumed: bool
    pinned: bool


@dataclass(frozen=True, slots=True)
class Step:
    """One scripted call (a batch, a run of gets, a warm) and the cache right after it."""

    index: int
    window: int
    group: str  # what the step belongs to: "probe", "t3", "c2", "setup"
    kind: str  # prefetch | consume | warm
    call: str  # the calls made and their outcome, in words
    slots: tuple[Cell, ...]
    touched: tuple[int, ...]  # slots hit or loaded in this step
    evicted: tuple[tuple[int, int, bool], ...]  # (slot, expert, wasted prefetch?)
    failed: tuple[int, ...]  # experts whose read could not complete (nothing published)
    skipped: tuple[int, ...]  # batch members left unreserved (nothing evictable)
    cut_before: bool  # the shard copy was truncated just before this step
    stats: Mapping[str, object]  # the window's stats after this step, timings dropped


@dataclass(frozen=True, slots=True)
class Window:
    """A stats window (between reset_stats calls) and its stats at its end."""

    index: int
    first: int  # first and last step index
    last: int
    published: int  # loads that published: the only bytes the counters may claim
    failed: int  # reads that could not complete, as the script saw them
    stats: Mapping[str, object]

    @property
    def requests(self) -> int:
        return int(self.stats["requests"])

    @property
    def aggregate_error(self) -> int:
        """Upstream's "hits - prefetch_reads" minus the exact resident hits (before the clamp)."""
        s = self.stats
        return int(s["aggregate_adjusted_hits"]) - int(s["hits_resident"])

    @property
    def aggregate_wrong(self) -> bool:
        return self.requests > 0 and self.aggregate_error != 0


@dataclass(frozen=True, slots=True)
class ScenarioRun:
    name: str
    slots: int
    topk: int
    schedule: int
    seed: int
    slot_bytes: int
    route: tuple[tuple[int, ...], ...]  # the scheduled tokens' top-k, router order
    steps: tuple[Step, ...]
    windows: tuple[Window, ...]


def fixture_dir() -> Path:
    """The shared fixture of this geometry (core.experts.fixture_store)."""
    return shared_fixture(json.dumps(GEOMETRY, sort_keys=True))


def check_slots(slots: object, topk: int, hi: int = MAX_SLOTS) -> int:
    """slots as an int in [topk + 1, hi], else a ParamError naming slots, topk and the range."""
    v = check_int("slots", slots, 1, hi)
    if v < topk + 1:
        raise ParamError(
            f"slots must be in [topk + 1, {hi}] = [{topk + 1}, {hi}] for topk = {topk}, got "
            f"slots = {v}: with fewer than topk + 1 slots one token could evict an expert it "
            f"is still using"
        )
    return v


def routing(schedule: int, topk: int, seed: int) -> tuple[tuple[int, ...], ...]:
    """The scheduled tokens' experts (one layer of 24, skew 1, persistence 0.5), router order."""
    tr = synthetic_trace(schedule, 1, N_EXPERTS, topk, SKEW, PERSISTENCE, seed)
    return tuple(tuple(int(e) for e in row) for row in tr[:, 1].reshape(schedule, topk))


def run_scenario(scenario: str, slots: int, topk: int, schedule: int, seed: int) -> ScenarioRun:
    """Run one preset on a fresh cache of `slots` slots; cached per parameters (frozen result)."""
    check_choice("scenario", scenario, SCENARIOS)
    topk = check_int("topk", topk, 1, MAX_TOPK)
    slots = check_slots(slots, topk)
    schedule = check_int("schedule", schedule, 1, MAX_SCHEDULE)
    seed = check_int("seed", seed, 0, 2**32 - 1)
    return _run(scenario, slots, topk, schedule, seed)


@functools.lru_cache(maxsize=64)
def _run(scenario: str, slots: int, topk: int, schedule: int, seed: int) -> ScenarioRun:
    route = routing(schedule, topk, seed)
    cut = scenario == "truncated shard"
    with tempfile.TemporaryDirectory(prefix="serving-lab-cut-") if cut else nullcontext() as own:
        src = fixture_dir()
        if own:  # never cut the shared fixture: cut a private copy
            for f in sorted(src.glob("*.safetensors")):
                shutil.copyfile(f, Path(own) / f.name)
            src = Path(own)
        index = ShardIndex.open(src)
        with ExpertCache(index, 1, N_EXPERTS, topk, slots * STRIDE) as cache:
            rec = _Recorder(cache, index)
            SCRIPTS[scenario](rec, route, topk, slots)
            rec.close_window()
            slot_bytes = cache.slot_bytes
    return ScenarioRun(scenario, slots, topk, schedule, seed, slot_bytes, route,
                       tuple(rec.steps), tuple(rec.windows))


class _Recorder:
    """Performs scripted calls on the cache and freezes what each one did."""

    def __init__(self, cache: ExpertCache, index: ShardIndex) -> None:
        self.c, self.index = cache, index
        self.steps: list[Step] = []
        self.windows: list[Window] = []
        self.seq = self.first = self.published = self.failed_n = 0
        self.cut_pending = False
        self.unreadable: frozenset[int] = frozenset()

    def prefetch(self, group: str, ids: tuple[int, ...] | list[int]) -> None:
        before = {e for e in ids if self.c.resident(0, e) is not None}
        n = self.c.get_many(0, list(ids))
        left = [e for e in dict.fromkeys(ids) if e not in before and self.c.resident(0, e) is None]
        failed = [e for e in left if e in self.unreadable]
        skipped = [e for e in left if e not in self.unreadable]
        self._step(group, "prefetch", f"get_many({list(ids)}): {n} published", failed, skipped)

    def consume(self, group: str, ids: tuple[int, ...] | list[int]) -> None:
        failed = []
        for e in ids:
            try:
                self.c.get(0, e)
            except ExpertLoadError:
                failed.append(e)
        self._step(group, "consume", f"get each of {list(ids)}", failed)

    def warm_pin(self, group: str, expert: int) -> None:
        self.c.warm(0, expert)
        self.c.pin(0, expert, True)
        self._step(group, "warm", f"warm({expert}), pin({expert})")

    def token(self, group: str, ids: tuple[int, ...], consume: tuple[int, ...]) -> None:
        """One decode step as upstream's run loop does it: reset, batch, then get in order."""
        self.reset()
        self.c.begin_layer()
        self.prefetch(group, ids)
        self.consume(group, consume)

    def truncate(self) -> None:
        """Cut the (private) shard at CUT_EXPERT's first byte, after it was indexed."""
        ref = resolve_expert(self.index, K3_LAYOUT, 0, CUT_EXPERT)
        os.truncate(self.index.paths[ref.shard], ref.lo)
        self.unreadable = frozenset(range(CUT_EXPERT, N_EXPERTS))
        self.cut_pending = True

    def reset(self) -> None:
        if len(self.steps) > self.first:
            self.close_window()
            self.c.reset_stats()

    def close_window(self) -> None:
        self.windows.append(Window(len(self.windows), self.first, len(self.steps) - 1,
                                   self.published, self.failed_n, self._stats()))
        self.first, self.published, self.failed_n = len(self.steps), 0, 0

    def _stats(self) -> Mapping[str, object]:
        return MappingProxyType({k: v for k, v in self.c.stats().items() if "seconds" not in k})

    def _step(self, group: str, kind: str, call: str, failed: tuple[int, ...] | list[int] = (),
              skipped: tuple[int, ...] | list[int] = ()) -> None:
        events = self.c.events(self.seq)
        if events:
            self.seq = events[-1].seq
        wasted = {(e.slot, e.expert) for e in events if e.op == "waste"}
        evicted = tuple((e.slot, e.expert, (e.slot, e.expert) in wasted)
                        for e in events if e.op == "evict")
        touched = tuple(sorted({e.slot for e in events
                                if e.op in ("publish", "hit_resident", "hit_prefetched")}))
        self.published += sum(1 for e in events if e.op == "publish")
        self.failed_n += len(failed)
        if failed:
            call += f"; {len(failed)} could not be read {list(failed)}"
        cells = tuple(Cell(s.state, s.expert, s.origin, s.consumed, s.pinned)
                      for s in self.c.snapshot().slots)
        self.steps.append(Step(
            len(self.steps), len(self.windows), group, kind, call, cells, touched, evicted,
            tuple(failed), tuple(skipped), self.cut_pending, self._stats(),
        ))
        self.cut_pending = False


def _prefetch_then_consume(rec: _Recorder, route, k: int, slots: int) -> None:
    probe = tuple(range(k))
    rec.prefetch("probe", probe)  # cold: requests 0, prefetch_reads k
    rec.consume("probe", probe)  # hits k, aggregate 0: every hit was a prefetch
    rec.consume("probe", probe)  # hits 2k, aggregate k
    rec.reset()
    rec.consume("probe", probe)  # the resident k: hits k, no prefetch, no bytes
    for t, ids in enumerate(route, 1):
        rec.token(f"t{t}", ids, ids)


def _consume_one_only(rec: _Recorder, route, k: int, slots: int) -> None:
    rec.prefetch("probe", tuple(range(k)))
    rec.consume("probe", (0,) * k)  # 1 prefetched + (k - 1) resident; aggregate says 0
    for t, ids in enumerate(route, 1):
        rec.token(f"t{t}", ids, (ids[0],) * k)


def _reset_window(rec: _Recorder, route, k: int, slots: int) -> None:
    rec.prefetch("probe", tuple(range(k)))
    rec.reset()
    rec.consume("probe", tuple(range(k)))  # consumed in the next window: aggregate says resident
    for t, ids in enumerate(route, 1):
        rec.prefetch(f"t{t}", ids)  # issued at the end of the previous step
        rec.reset()
        rec.c.begin_layer()
        rec.consume(f"t{t}", ids)


def _truncated_shard(rec: _Recorder, route, k: int, slots: int) -> None:
    rec.consume("probe", (0,))
    rec.truncate()
    rec.prefetch("probe", tuple(range(CUT_EXPERT, N_EXPERTS)))  # publishes 0
    rec.consume("probe", (N_EXPERTS - 1,))  # a miss that fails; expert 0 survives
    for t, ids in enumerate(route, 1):
        rec.token(f"t{t}", ids, ids)


def _pressure(rec: _Recorder, route, k: int, slots: int) -> None:
    if slots - k - 1 >= 1:  # fixed mode keeps topk + 1 slots unpinned
        counts = np.bincount(np.asarray(route).ravel(), minlength=N_EXPERTS)
        rec.warm_pin("setup", int(np.argmax(counts)))
    chunk = math.ceil(CHUNK_REQUESTS * slots / k)  # tokens per prefill chunk
    for c, start in enumerate(range(0, len(route), chunk), 1):
        ids = list(dict.fromkeys(e for tok in route[start:start + chunk] for e in tok))
        rec.reset()
        rec.c.begin_layer()
        rec.prefetch(f"c{c}", sorted(ids))  # as a bitmap yields them; the tail finds no slot
        for j in range(0, len(ids), k):  # one get each, in router order, k at a time
            if j:
                rec.c.begin_layer()  # the previous k were consumed: release their leases
            rec.consume(f"c{c}", ids[j:j + k])


SCRIPTS = {
    "prefetch then consume": _prefetch_then_consume,
    "consume one only": _consume_one_only,
    "reset window": _reset_window,
    "truncated shard": _truncated_shard,
    "pressure": _pressure,
}
