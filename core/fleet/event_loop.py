"""The event loop behind simulate(): one run's mutable state, one method per step.

An event is (time, seq, kind, request, cluster, epoch); seq breaks time ties in push order, and
an event whose epoch is not its cluster's current one is stale (the cluster failed after it was
pushed). Arrivals are not events: run() merges the trace, in order, with the heap by time.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from heapq import heappop, heappush

import numpy as np

from core.fleet.budgets import ADMIT, QUEUE, BudgetController
from core.fleet.config import SimConfig
from core.fleet.prefix_index import PrefixIndex
from core.fleet.ring import ConsistentHashRing, hash64
from core.fleet.routers import FleetState, make_router
from core.fleet.traces import Trace
from core.prefix.rule import usable_blocks

PREFILL_DONE, FINISH, FAIL, RECOVER = 0, 1, 2, 3


class FleetRun:
    """The mutable state of one simulation: trace columns as lists (the hot loop indexes them),
    the fleet (caches, router, budgets), the event heap, and the output columns being filled."""

    # NOTE: __slots__ keeps attribute loads on the fast path in the hot loop (an instance dict
    # with this many keys loses CPython's shared-key specialisation).
    __slots__ = (
        "trace", "cfg", "n", "bs", "arrival", "klass", "key", "session", "plen", "olen", "offs",
        "ids", "caches", "fleet", "load", "live", "router", "choose", "needs_blocks", "ref_ring",
        "offer", "release", "miss_s", "hit_s", "step", "slots", "stride", "queues", "running",
        "epoch", "active", "last_cluster", "primary", "bound", "num_moved", "num_bound",
        "lost_tokens", "num_requeued", "num_interrupted", "admitted", "deferred", "cluster",
        "start_t", "ttft", "reused", "admit_t", "finish_t", "on_primary", "requeued",
        "interrupted", "moved", "heap", "seq", "track_finish", "load_times", "sample_at",
        "series",
    )

    def __init__(self, trace: Trace, cfg: SimConfig) -> None:
        self.trace, self.cfg = trace, cfg
        self._read_trace(trace)
        self._build_fleet(cfg)
        self._open_columns(trace.n)
        self.heap: list[tuple] = []
        self.seq = itertools.count()
        # NOTE: finishes matter only to budgets (release) and failures (interrupted decodes);
        # without either, skipping their events changes no record.
        self.track_finish = cfg.budget.mode != "off" or cfg.fail_cluster is not None
        self.load_times = np.linspace(self.arrival[0], self.arrival[-1], cfg.load_bins)
        self.sample_at = self.load_times.tolist() + [math.inf]
        self.series: list[list[int]] = []  # load per cluster at each sample time

    def _read_trace(self, trace: Trace) -> None:
        self.n, self.bs = trace.n, trace.block_size
        self.arrival, self.klass = trace.arrival.tolist(), trace.klass.tolist()
        self.key, self.session = trace.key.tolist(), trace.session.tolist()
        self.plen, self.olen = trace.prompt_len.tolist(), trace.output_len.tolist()
        self.offs, self.ids = trace.block_offsets.tolist(), trace.block_ids

    def _build_fleet(self, cfg: SimConfig) -> None:
        nc = cfg.clusters
        self.caches = [PrefixIndex(cfg.cache_blocks, self.bs, cfg.checkpoint_blocks, cfg.group_cost)
                       for _ in range(nc)]
        self.fleet = FleetState(self.caches)
        self.load, self.live = self.fleet.load, self.fleet.live
        self.router = make_router(cfg.router, nc, cfg.vnodes, cfg.bound_c, cfg.beta)
        self.choose, self.needs_blocks = self.router.choose, self.router.needs_blocks
        self.ref_ring = ConsistentHashRing(range(nc), vnodes=cfg.vnodes)  # for on_primary only
        budget = BudgetController(cfg.budget)
        self.offer, self.release = budget.offer, budget.release
        self.miss_s, self.hit_s = 1.0 / cfg.prefill_tok_s, cfg.hit_cost / cfg.prefill_tok_s
        self.step, self.slots, self.stride = cfg.decode_step_s, cfg.slots, cfg.checkpoint_blocks
        self.queues: list[deque[int]] = [deque() for _ in range(nc)]
        self.running, self.epoch = [0] * nc, [0] * nc
        self.active: list[dict[int, float]] = [{} for _ in range(nc)]  # request -> first token
        self.last_cluster: dict[int, int] = {}  # session -> cluster of its latest turn
        self.primary: dict[int, int] = {}  # key -> live ring primary; cleared on membership change
        self.bound: set[int] = set()  # sessions of the failed cluster not yet served again
        self.num_moved = self.num_bound = self.lost_tokens = 0
        self.num_requeued = self.num_interrupted = 0

    def _open_columns(self, n: int) -> None:
        nan = math.nan
        self.admitted, self.deferred, self.cluster = [False] * n, [False] * n, [-1] * n
        self.start_t, self.ttft, self.reused = [nan] * n, [nan] * n, [0] * n
        self.admit_t, self.finish_t = [nan] * n, [nan] * n
        self.on_primary, self.requeued = [False] * n, [False] * n
        self.interrupted, self.moved = [False] * n, [False] * n

    # -- the loop -------------------------------------------------------------------------------

    def run(self) -> None:
        """Merge arrivals (trace order) with the event heap by time; on a tie the event first."""
        self._schedule_failure()
        arrival, n, heap, arrive = self.arrival, self.n, self.heap, self._arrive
        handle = (self._prefill_done, self._finish, self._fail, self._recover)
        next_sample = self.sample_at[0]
        i = 0
        while i < n or heap:
            if i < n and (not heap or arrival[i] < heap[0][0]):
                t = arrival[i]
                if t >= next_sample:
                    next_sample = self._sample_load(t)
                arrive(i, t)
                i += 1
            else:
                t, _, kind, request, k, ep = heappop(heap)
                if t >= next_sample:
                    next_sample = self._sample_load(t)
                handle[kind](request, k, ep, t)
        while len(self.series) < len(self.load_times):
            self.series.append(self.load.copy())

    def _schedule_failure(self) -> None:
        cfg = self.cfg
        if cfg.fail_cluster is not None:
            self._push(cfg.fail_at, FAIL, -1, cfg.fail_cluster, 0)
            if cfg.recover_at is not None:
                self._push(cfg.recover_at, RECOVER, -1, cfg.fail_cluster, 0)

    def _push(self, t: float, kind: int, request: int, k: int, ep: int) -> None:
        heappush(self.heap, (t, next(self.seq), kind, request, k, ep))

    def _sample_load(self, t: float) -> float:
        """Record the load per cluster for every sample time <= t; returns the next one."""
        series, sample_at, load = self.series, self.sample_at, self.load
        while t >= sample_at[len(series)]:
            series.append(load.copy())
        return sample_at[len(series)]

    # -- admission and placement ----------------------------------------------------------------

    def _arrive(self, i: int, t: float) -> None:
        decision = self.offer(self.klass[i], i)
        if decision == ADMIT:
            self.admit_t[i] = t
            self._dispatch(i, t)
        elif decision == QUEUE:
            self.deferred[i] = True

    def _admit_released(self, freed: list[int], t: float) -> None:
        """Requests the budget let out of its queue now take their units and are routed."""
        for j in freed:
            self.admit_t[j] = t
            self._dispatch(j, t)

    def _dispatch(self, i: int, t: float) -> None:
        """Route one admitted request; start it, or queue it behind the cluster's busy slots."""
        blocks = self.ids[self.offs[i] : self.offs[i + 1]].tolist() if self.needs_blocks else None
        k = self.choose(self.key[i], blocks, self.fleet)
        self.load[k] += 1
        self.fleet.total_load += 1
        if self.running[k] < self.slots:
            self._start(i, k, t, blocks)
        else:
            self.queues[k].append(i)

    def _start(self, i: int, k: int, t: float, blocks: list[int] | None = None) -> None:
        """Prefill request i on cluster k from time t: cost it, record it, schedule its events."""
        if blocks is None:
            blocks = self.ids[self.offs[i] : self.offs[i + 1]].tolist()
        hb = self.caches[k].match_and_insert(blocks)
        p, step = self.plen[i], self.step
        hit = usable_blocks(hb, p, self.bs, self.stride) * self.bs  # core.prefix's rule
        pre = (p - hit) * self.miss_s + hit * self.hit_s  # SimConfig.prefill_s, inlined
        first = t + pre + step
        finish = first + max(self.olen[i] - 1, 0) * step
        self.admitted[i], self.cluster[i], self.start_t[i], self.reused[i] = True, k, t, hit
        self.ttft[i] = first - self.arrival[i]
        self.finish_t[i] = finish
        self._note_affinity(i, k)
        self.running[k] += 1
        ep = self.epoch[k]
        heappush(self.heap, (t + pre, next(self.seq), PREFILL_DONE, i, k, ep))
        if self.track_finish:
            self.active[k][i] = first
            heappush(self.heap, (finish, next(self.seq), FINISH, i, k, ep))

    def _note_affinity(self, i: int, k: int) -> None:
        """Whether i runs on its key's ring primary; whether it moves a failed cluster's session."""
        key = self.key[i]
        owner = self.primary.get(key)
        if owner is None:
            owner = self.primary[key] = self.ref_ring.route_hash(hash64(key))[0]  # type: ignore[assignment]
        self.on_primary[i] = owner == k
        s = self.session[i]
        bound = self.bound
        if bound and s in bound:
            bound.discard(s)
            if k != self.cfg.fail_cluster:
                self.num_moved += 1
                self.moved[i] = True
        self.last_cluster[s] = k

    # -- events ---------------------------------------------------------------------------------

    def _prefill_done(self, i: int, k: int, ep: int, t: float) -> None:
        if ep == self.epoch[k]:
            self.running[k] -= 1
            self.load[k] -= 1
            self.fleet.total_load -= 1
            queue = self.queues[k]
            if queue:
                self._start(queue.popleft(), k, t)

    def _finish(self, i: int, k: int, ep: int, t: float) -> None:
        if ep == self.epoch[k]:
            del self.active[k][i]
            freed = self.release(self.klass[i])
            if freed:  # usually empty: skip the call
                self._admit_released(freed, t)

    def _fail(self, i: int, k: int, ep: int, t: float) -> None:
        """Cluster k dies at t: cache lost, decodes cut, queued and prefilling work re-routed."""
        self._set_live(k, False)
        self.lost_tokens = self.caches[k].clear() * self.bs
        self.epoch[k] += 1  # pending events of k are now stale
        redo, freed = self._cut_active(k, t)
        redo.extend(self.queues[k])
        self.queues[k].clear()
        self.fleet.total_load -= self.load[k]
        self.load[k] = self.running[k] = 0
        self.bound.update(s for s, c in self.last_cluster.items() if c == k)
        self.num_bound, self.num_requeued = len(self.bound), len(redo)
        for j in sorted(redo):
            self.requeued[j] = True
            self._dispatch(j, t)
        self._admit_released(freed, t)

    def _cut_active(self, k: int, t: float) -> tuple[list[int], list[int]]:
        """Split k's started requests: past their first token (interrupted: their decode ends and
        their budget units are freed at t) or still prefilling (returned to redo). Returns
        (redo, requests the freed units let out of the budget queue)."""
        redo, freed, cut = [], [], 0
        for j, first in self.active[k].items():
            if first <= t:
                self.interrupted[j] = True
                self.finish_t[j] = t
                cut += 1
                freed.extend(self.release(self.klass[j]))
            else:
                redo.append(j)
        self.active[k].clear()
        self.num_interrupted = cut
        return redo, freed

    def _recover(self, i: int, k: int, ep: int, t: float) -> None:
        self._set_live(k, True)

    def _set_live(self, k: int, alive: bool) -> None:
        self.live[k] = alive
        self.fleet.n_live += 1 if alive else -1
        self.router.set_live(k, alive)
        self.ref_ring.set_alive(k, alive)
        self.primary.clear()
