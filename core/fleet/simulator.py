"""Discrete-event fleet simulator (heapq): budgets, routing, prefix caches, failure and recovery.

Model (each simplification is an optimism a figure should name):
  * Arrivals come from a Trace (open loop). Each passes the BudgetController (fleet-wide, per
    class), then the router picks a cluster.
  * A cluster runs `slots` prefills at once, FIFO behind them. Prefill takes
    (prompt - hit) / prefill_tok_s + hit * hit_cost / prefill_tok_s; the first token comes one
    decode step later; the request holds its budget until output_len decode steps have run.
    Decode does not slow prefill, and batching is not modelled.
  * hit = leading cached blocks of the prompt on that cluster, rounded down to the KDA checkpoint
    stride, times 512, at most prompt - 1 (one token must run for the logits). The prompt's blocks
    enter the cache when its prefill starts.
  * At fail_at the cluster dies: its cache is lost, its queued and prefilling requests are
    re-routed at once (requeued; TTFT still counts from their arrival), and requests already past
    their first token are counted as interrupted: their decode ends at the failure (finish), they
    free their budget units then, and the summary counts them as SLO misses (their TTFT stays in
    the percentiles: the first token was delivered). Ring routers send its keys to their
    secondaries, which are cold for them. At recover_at it rejoins with an empty cache.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from dataclasses import replace

import numpy as np

from core.errors import ParamError, check_choice
from core.fleet.budgets import ADMIT, QUEUE, BudgetController
from core.fleet.cache import PrefixCache
from core.fleet.config import SimConfig
from core.fleet.metrics import recovery_time, summarize
from core.fleet.records import FailoverStats, Records, SimResult
from core.fleet.ring import ConsistentHashRing, hash64
from core.fleet.routers import ROUTERS, FleetState, make_router
from core.fleet.traces import Trace

_PREFILL_DONE, _FINISH, _FAIL, _RECOVER = 0, 1, 2, 3


def simulate(trace: Trace, config: SimConfig | None = None) -> SimResult:
    """Run one trace through the fleet; deterministic for a given trace and config."""
    cfg = config or SimConfig()
    if not isinstance(trace, Trace) or trace.n == 0:
        raise ParamError("trace must be a non-empty Trace")
    n, nc, bs = trace.n, cfg.clusters, trace.block_size
    caches = [PrefixCache(cfg.cache_blocks, bs) for _ in range(nc)]
    fleet = FleetState(caches)
    load, live = fleet.load, fleet.live
    router = make_router(cfg.router, nc, cfg.vnodes, cfg.bound_c, cfg.beta)
    choose, needs_blocks = router.choose, router.needs_blocks
    ref_ring = ConsistentHashRing(range(nc), vnodes=cfg.vnodes)  # for on_primary only
    budget = BudgetController(cfg.budget)
    offer, release = budget.offer, budget.release

    arrival, klass, key = trace.arrival.tolist(), trace.klass.tolist(), trace.key.tolist()
    session, plen = trace.session.tolist(), trace.prompt_len.tolist()
    olen, offs, ids = trace.output_len.tolist(), trace.block_offsets.tolist(), trace.block_ids
    miss_s, hit_s = 1.0 / cfg.prefill_tok_s, cfg.hit_cost / cfg.prefill_tok_s
    step, slots, stride = cfg.decode_step_s, cfg.slots, cfg.checkpoint_blocks

    nan = math.nan
    admitted, deferred, cluster = [False] * n, [False] * n, [-1] * n
    start_t, ttft, reused = [nan] * n, [nan] * n, [0] * n
    admit_t, finish_t = [nan] * n, [nan] * n
    on_primary, requeued, interrupted = [False] * n, [False] * n, [False] * n
    moved = [False] * n

    heap: list[tuple] = []
    push, pop, seq = heapq.heappush, heapq.heappop, itertools.count()
    queues: list[deque[int]] = [deque() for _ in range(nc)]
    running, epoch = [0] * nc, [0] * nc
    active: list[dict[int, float]] = [{} for _ in range(nc)]  # request -> first-token time
    last_cluster: dict[int, int] = {}
    primary: dict[int, int] = {}
    bound: set[int] = set()
    # NOTE: finishes matter only to budgets (release) and failures (interrupted decodes); without
    # either, skipping their events changes no record.
    track_finish = cfg.budget.mode != "off" or cfg.fail_cluster is not None
    fo = {"moved": 0, "bound": 0, "lost": 0, "requeued": 0, "interrupted": 0}

    def start(i: int, k: int, t: float, blocks: list[int] | None = None) -> None:
        if blocks is None:
            blocks = ids[offs[i] : offs[i + 1]].tolist()
        hb = caches[k].match_and_insert(blocks)
        p = plen[i]
        hit = min((hb - hb % stride) * bs, p - 1 if p > 0 else 0)
        pre = (p - hit) * miss_s + hit * hit_s
        first = t + pre + step
        admitted[i], cluster[i], start_t[i], reused[i] = True, k, t, hit
        ttft[i] = first - arrival[i]
        finish_t[i] = first + max(olen[i] - 1, 0) * step
        owner = primary.get(key[i])
        if owner is None:
            owner = primary[key[i]] = ref_ring.route_hash(hash64(key[i]))[0]  # type: ignore[assignment]
        on_primary[i] = owner == k
        s = session[i]
        if bound and s in bound:
            bound.discard(s)
            if k != cfg.fail_cluster:
                fo["moved"] += 1
                moved[i] = True
        last_cluster[s] = k
        running[k] += 1
        ep = epoch[k]
        push(heap, (t + pre, next(seq), _PREFILL_DONE, i, k, ep))
        if track_finish:
            active[k][i] = first
            push(heap, (finish_t[i], next(seq), _FINISH, i, k, ep))

    def dispatch(i: int, t: float) -> None:
        blocks = ids[offs[i] : offs[i + 1]].tolist() if needs_blocks else None
        k = choose(key[i], blocks, fleet)
        load[k] += 1
        fleet.total_load += 1
        if running[k] < slots:
            start(i, k, t, blocks)
        else:
            queues[k].append(i)

    def set_live(k: int, alive: bool) -> None:
        live[k] = alive
        fleet.n_live += 1 if alive else -1
        router.set_live(k, alive)
        ref_ring.set_alive(k, alive)
        primary.clear()

    def fail(k: int, t: float) -> None:
        set_live(k, False)
        fo["lost"] = caches[k].clear() * bs
        epoch[k] += 1  # pending events of k are now stale
        redo, freed, cut = [], [], 0
        for j, first in active[k].items():
            if first <= t:
                interrupted[j] = True
                finish_t[j] = t  # its decode ends here; its budget units are freed now
                cut += 1
                freed.extend(release(klass[j]))
            else:
                redo.append(j)
        redo.extend(queues[k])
        queues[k].clear()
        active[k].clear()
        fleet.total_load -= load[k]
        load[k] = running[k] = 0
        bound.update(s for s, c in last_cluster.items() if c == k)
        fo["bound"], fo["requeued"], fo["interrupted"] = len(bound), len(redo), cut
        for j in sorted(redo):
            requeued[j] = True
            dispatch(j, t)
        for j in freed:
            admit_t[j] = t
            dispatch(j, t)

    if cfg.fail_cluster is not None:
        push(heap, (cfg.fail_at, next(seq), _FAIL, cfg.fail_cluster, 0, 0))
        if cfg.recover_at is not None:
            push(heap, (cfg.recover_at, next(seq), _RECOVER, cfg.fail_cluster, 0, 0))

    bins = cfg.load_bins
    times = np.linspace(arrival[0], arrival[-1], bins)
    sample_at = times.tolist() + [math.inf]
    series: list[list[int]] = []
    i = 0
    while i < n or heap:
        if i < n and (not heap or arrival[i] < heap[0][0]):
            t = arrival[i]
            ev = None
        else:
            ev = pop(heap)
            t = ev[0]
        while t >= sample_at[len(series)]:
            series.append(load.copy())
        if ev is None:
            decision = offer(klass[i], i)
            if decision == ADMIT:
                admit_t[i] = t
                dispatch(i, t)
            elif decision == QUEUE:
                deferred[i] = True
            i += 1
            continue
        kind, a, k, ep = ev[2], ev[3], ev[4], ev[5]
        if kind == _PREFILL_DONE:
            if ep == epoch[k]:
                running[k] -= 1
                load[k] -= 1
                fleet.total_load -= 1
                if queues[k]:
                    start(queues[k].popleft(), k, t)
        elif kind == _FINISH:
            if ep == epoch[k]:
                del active[k][a]
                for j in release(klass[a]):
                    admit_t[j] = t
                    dispatch(j, t)
        elif kind == _FAIL:
            fail(a, t)
        else:
            set_live(a, True)
    while len(series) < bins:
        series.append(load.copy())

    records = Records(
        arrival=trace.arrival.copy(),
        klass=trace.klass.copy(),
        session=trace.session.copy(),
        prompt_tokens=trace.prompt_len.copy(),
        admitted=np.array(admitted, dtype=bool),
        deferred=np.array(deferred, dtype=bool),
        cluster=np.array(cluster, dtype=np.int32),
        admitted_at=np.array(admit_t, dtype=np.float64),
        start=np.array(start_t, dtype=np.float64),
        ttft=np.array(ttft, dtype=np.float64),
        finish=np.array(finish_t, dtype=np.float64),
        reused_tokens=np.array(reused, dtype=np.int64),
        on_primary=np.array(on_primary, dtype=bool),
        requeued=np.array(requeued, dtype=bool),
        interrupted=np.array(interrupted, dtype=bool),
        moved=np.array(moved, dtype=bool),
    )
    summary = summarize(records, cfg.slo_s, nc)
    failover = None
    if cfg.fail_cluster is not None:
        t_end = cfg.recover_at if cfg.recover_at is not None else arrival[-1]
        failover = FailoverStats(
            cluster=cfg.fail_cluster,
            fail_at=float(cfg.fail_at),  # type: ignore[arg-type]
            recover_at=cfg.recover_at,
            sessions_bound=fo["bound"],
            sessions_moved=fo["moved"],
            cache_lost_tokens=fo["lost"],
            requeued=fo["requeued"],
            interrupted=fo["interrupted"],
            recovery_time_s=recovery_time(
                records.arrival,
                records.ttft,
                records.admitted,
                float(cfg.fail_at),
                t_end,
                cfg.recovery_window_s,
            ),  # type: ignore[arg-type]
        )
    return SimResult(
        config=cfg,
        records=records,
        summary=summary,
        load_times=times,
        load_series=np.array(series[:bins], dtype=np.int64).reshape(bins, nc),
        failover=failover,
        duration_s=trace.duration,
    )


def compare_routers(
    trace: Trace, config: SimConfig | None = None, routers: tuple[str, ...] = ROUTERS
) -> dict[str, SimResult]:
    """The router bake-off: the same trace and config under each router."""
    cfg = config or SimConfig()
    for r in routers:
        check_choice("router", r, ROUTERS)
    return {r: simulate(trace, replace(cfg, router=r)) for r in routers}
