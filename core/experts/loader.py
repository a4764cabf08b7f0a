"""SlotLoader: moves expert bytes into arena slots (serial admit, and batch reserve/read/publish).

The arena is one anonymous mmap of n_slots x slot_bytes (page aligned, so every slot is a
valid O_DIRECT destination). A slot becomes READY only in `publish`, after every piece of its
read was checked; a reservation whose read fails goes back to EMPTY.
"""

from __future__ import annotations

import mmap
import time
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from core.experts.accounting import Accountant
from core.experts.errors import ExpertLoadError, SlotsExhausted
from core.experts.events import EventLog
from core.experts.layout import ExpertLayout, ExpertRef, resolve_expert
from core.experts.reader import MAX_PIECES, ReadPlan, ShardFiles, complete, plan_reads
from core.experts.shards import ShardIndex
from core.experts.slot_view import make_view
from core.experts.slots import DEMAND, PREFETCH, SlotTable


class SlotLoader:
    def __init__(
        self,
        index: ShardIndex,
        layout: ExpertLayout,
        table: SlotTable,
        acct: Accountant,
        log: EventLog,
        *,
        n_experts: int,
        slot_bytes: int,
        chunk_bytes: int | None,
        compat: bool,
        direct_io: bool,
        max_workers: int,
    ) -> None:
        self.index, self.layout, self.t, self.acct, self.log = index, layout, table, acct, log
        self.n_experts = n_experts
        self.slot_bytes = slot_bytes
        self.chunk_bytes = chunk_bytes
        self.compat = compat
        self._refs: dict[int, ExpertRef] = {}
        self._mm = mmap.mmap(-1, table.n_slots * slot_bytes)
        self.arena = np.frombuffer(self._mm, np.uint8)  # (n_slots * slot_bytes,)
        self._mem = memoryview(self._mm)
        self.files = ShardFiles(index, direct=direct_io)
        self._pool = ThreadPoolExecutor(max_workers, thread_name_prefix="expert-read")
        self._finalizer = weakref.finalize(self, _shutdown, self._pool, self.files)

    def ref(self, layer: int, expert: int) -> ExpertRef:
        key = layer * self.n_experts + expert
        ref = self._refs.get(key)
        if ref is None:
            ref = self._refs[key] = resolve_expert(self.index, self.layout, layer, expert)
        return ref

    def slot_mem(self, s: int) -> memoryview:
        return self._mem[s * self.slot_bytes : (s + 1) * self.slot_bytes]

    def readable(self, layer: int, expert: int, max_pieces: int = 0) -> tuple[ExpertRef, ReadPlan]:
        """(ref, plan) for a load; raises ExpertLoadError (counted) before any slot is touched.

        Fixed mode also refuses a read the shard can no longer satisfy (it was truncated), so
        a failing read never evicts an innocent owner.
        """
        try:
            ref = self.ref(layer, expert)
            plan = plan_reads(ref, self.chunk_bytes, max_pieces)
            if plan.footprint > self.slot_bytes:
                raise ExpertLoadError(
                    f"layer {layer} expert {expert}: needs {plan.footprint} B, "
                    f"slot is {self.slot_bytes} B"
                )
            end = max(t.end for t in ref.tensors)
            if not self.compat and not self.files.covers(ref.shard, end):
                raise ExpertLoadError(
                    f"layer {layer} expert {expert}: {self.index.paths[ref.shard]} is shorter "
                    f"than byte {end} (truncated?)"
                )
        except ExpertLoadError:
            self.acct.c.failed_reads += 1
            raise
        return ref, plan

    def reserve(self, s: int, key: int) -> None:
        """Evict slot s's owner (if any) and mark it INFLIGHT for `key`."""
        t, n = self.t, self.n_experts
        if t.key_of[s] >= 0:
            old = t.key_of[s]
            wasted = self.acct.evict(s)
            self.log.add("evict", old // n, old % n, s, t.origin[s])
            if wasted:
                self.log.add("waste", old // n, old % n, s, t.origin[s])
            t.unmap(s)
        t.take(s)
        t.pending_key[s] = key
        t.stamp(s)
        self.log.add("reserve", key // n, key % n, s)

    def admit(self, layer: int, expert: int, origin: str) -> int:
        """Serial load into a victim slot; returns the slot or raises (state stays consistent)."""
        self._check_open()
        ref, plan = self.readable(layer, expert)
        t = self.t
        s = t.pick_victim()
        if s < 0:
            if origin == DEMAND:
                self.acct.c.drops += 1
                self.log.add("drop", layer, expert)
            else:
                self.acct.c.prefetch_skipped += 1
            raise SlotsExhausted(
                f"layer {layer} expert {expert}: every slot is in flight, pinned or leased"
            )
        key = layer * self.n_experts + expert
        self.reserve(s, key)
        t0 = time.perf_counter()
        got = self.files.read_plan(plan, self.slot_mem(s))
        self.acct.c.read_seconds += time.perf_counter() - t0
        if not complete(plan, got):
            self._fail(s, ref, origin)
            raise ExpertLoadError(
                f"layer {layer} expert {expert}: short read from {self.index.paths[ref.shard]} "
                f"({sum(got)} B arrived, {plan.need_end} B needed)"
            )
        self.publish(s, key, ref, plan, origin, sum(got))
        return s

    def load_batch(self, layer: int, ids: list[int], protected: set[int],
                   max_reserve: int, origin: str = PREFETCH) -> int:
        """Reserve serially, read in parallel sorted by offset, publish what fully arrived.

        Stops reserving when no slot is evictable (a prefetch counts prefetch_skipped += the
        distinct, not resident ids left unread; a demand batch leaves them to get()) or after
        `max_reserve` reservations (upstream's 64: the ids never looked at are counted in
        batch_ids_dropped). `origin` is PREFETCH or DEMAND_BATCH (see core.experts.stats).
        """
        self._check_open()
        t, n = self.t, self.n_experts
        work: list[tuple[int, int, ExpertRef, ReadPlan]] = []
        seen: set[int] = set()
        cap = max(1, MAX_PIECES // max(1, min(len(ids), max_reserve)))
        for i, e in enumerate(ids):
            if len(work) >= max_reserve:
                self.acct.c.batch_ids_dropped += len(ids) - i
                break
            key = layer * n + e
            if key in seen or t.slot_of[key] >= 0:
                continue  # resident members: compat leaves them unstamped
            seen.add(key)
            try:
                ref, plan = self.readable(layer, e, cap)
            except ExpertLoadError:
                continue  # counted; upstream skips it silently and get() will fail on it
            s = t.pick_victim(protected)
            if s < 0:
                # Left unread: this id and every later one that is neither resident nor
                # already handled in this batch, each counted once.
                if origin == PREFETCH:
                    left = {key} | {layer * n + x for x in ids[i + 1 :]}
                    self.acct.c.prefetch_skipped += sum(
                        1 for k in left if (k == key or k not in seen) and t.slot_of[k] < 0
                    )
                break
            self.reserve(s, key)
            work.append((s, key, ref, plan))
        work.sort(key=lambda w: (w[3].shard, w[3].pieces[0].file_off))

        t0 = time.perf_counter()
        futures = [
            [
                self._pool.submit(self.files.read_into, plan.shard,
                                  self.slot_mem(s)[p.slot_off : p.slot_off + p.length],
                                  p.file_off, p.aligned)
                for p in plan.pieces
            ]
            for s, _, _, plan in work
        ]
        got = [[f.result() for f in fs] for fs in futures]
        self.acct.c.batch_seconds += time.perf_counter() - t0

        published = 0
        for (s, key, ref, plan), g in zip(work, got, strict=True):
            if complete(plan, g):
                self.publish(s, key, ref, plan, origin, sum(g))
                published += 1
            else:
                self._fail(s, ref, origin)
        return published

    def publish(self, s: int, key: int, ref: ExpertRef, plan: ReadPlan, origin: str,
                device: int) -> None:
        t = self.t
        self.log.add("read_done", ref.layer, ref.expert, s, origin)
        t.publish(s, key, origin, origin == DEMAND, self.acct.window)
        base = s * self.slot_bytes
        t.views[s] = make_view(ref, self.layout.short_names, s, t.generation[s],
                               self.arena[base : base + self.slot_bytes], plan.pad,
                               t.generation)
        t.stamp(s)
        self.acct.loaded(s, origin, ref.nbytes, device)
        self.log.add("publish", ref.layer, ref.expert, s, origin)

    def _fail(self, s: int, ref: ExpertRef, origin: str) -> None:
        self.acct.c.failed_reads += 1
        self.t.release(s)
        self.log.add("read_failed", ref.layer, ref.expert, s, origin)

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def close(self) -> None:
        self._finalizer()

    def _check_open(self) -> None:
        if self.closed:
            raise ExpertLoadError("the cache is closed: no more reads")


def _shutdown(pool: ThreadPoolExecutor, files: ShardFiles) -> None:
    pool.shutdown(wait=True)
    files.close()
