"""Recorder: performs a scenario's scripted calls on a real ExpertCache and freezes each one."""

from __future__ import annotations

import os

from core.experts.cache import ExpertCache
from core.experts.errors import ExpertLoadError
from core.experts.layout import K3_LAYOUT, resolve_expert
from core.experts.scenarios.geometry import CUT_EXPERT, N_EXPERTS
from core.experts.scenarios.records import Cell, Step, Window
from core.experts.shards import ShardIndex


class Recorder:
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
        self.windows.append(Window(index=len(self.windows), first=self.first,
                                   last=len(self.steps) - 1, published=self.published,
                                   failed=self.failed_n, stats=self.c.stats()))
        self.first, self.published, self.failed_n = len(self.steps), 0, 0

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
        published = sum(1 for e in events if e.op == "publish")
        self.published += published
        self.failed_n += len(failed)
        if failed:
            call += f"; {len(failed)} could not be read {list(failed)}"
        cells = tuple(Cell(state=s.state, expert=s.expert, origin=s.origin, consumed=s.consumed,
                           pinned=s.pinned)
                      for s in self.c.snapshot().slots)
        self.steps.append(Step(index=len(self.steps), window=len(self.windows), group=group,
                               kind=kind, call=call, slots=cells, touched=touched, evicted=evicted,
                               failed=tuple(failed), skipped=tuple(skipped),
                               cut_before=self.cut_pending, stats=self.c.stats(),
                               published=published))
        self.cut_pending = False
