"""Claims of the Fleet budgets and simulation lesson (assets/lessons/fleet_sim.md), computed by
running core.fleet's simulator on the tab's scenes (core.experiments.fleet_sim builds their
configs)."""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np

from core.dims import k3_group_blocks
from core.experiments.fleet_checkpoints import k3_checkpoint_sweep
from core.experiments.fleet_sim import (
    BURST_DURATION,
    BURST_S,
    DOWN_S,
    FAIL_AT,
    FAIL_CLUSTER,
    RATES,
    SEED,
    SHORT_RATE,
    budget_config,
    budget_runs,
    capacity_sweeps,
    fleet_config,
    fleet_run,
    fleet_trace,
)
from core.experiments.queueing import closed_loop, mm1_p95, mm1_wait, open_loop
from core.fleet.capacity import prefill_load
from core.fleet.config import DEMO_BUDGET, SimConfig
from core.fleet.metrics import SEED_SENTINEL, naive_p95_with_rejections_as_sentinel, percentile
from core.fleet.result import SimResult
from core.fleet.simulator import simulate
from core.fleet.traces import long_burst_trace
from tabs.fleet_sim import TAB
from tests.lessons.registry import Reason, Within, claim, reason

LESSON = "fleet_sim"
SATURATED_RATE = 80  # the rate the capacity paragraph reads


def _default(name: str) -> object:
    return TAB.control(name).value


@functools.cache
def _healthy(rate: int, router: str) -> SimResult:
    """The failover scene's trace with no failure at all."""
    return simulate(fleet_trace(rate, SEED), fleet_config(router, FAIL_AT).without_failure())


@functools.cache
def _checkpointed(every: int, group_cost: float) -> SimResult:
    cfg = replace(fleet_config("cache_aware", int(_default("fail_at"))), checkpoint_blocks=every,
                  group_cost=group_cost)
    return simulate(fleet_trace(int(_default("rate")), int(_default("seed"))), cfg)


@claim(LESSON, "A fleet of {n} clusters serves chats and long documents.")
def fleet_size() -> dict[str, object]:
    n = fleet_config("ring", FAIL_AT).clusters
    assert budget_config("off", 24).clusters == n
    assert len(fleet_run(60, FAIL_AT, "ring", SEED).summary.served) == n
    return {"n": n}


def _work_ratio(seed: int, hit_cost: float | None = None) -> float:
    """Round-robin's mean prefill seconds per admitted request over ring's, at 60 requests/s
    with no failure (hit_cost: a cached token's cost instead of the config's)."""
    out = []
    for router in ("round_robin", "ring"):
        cfg = fleet_config(router, FAIL_AT).without_failure()
        cfg = cfg if hit_cost is None else replace(cfg, hit_cost=hit_cost)
        rec = simulate(fleet_trace(60, seed), cfg).records
        a = rec.admitted
        out.append(float(np.mean(cfg.prefill_s(rec.prompt_tokens[a], rec.reused_tokens[a]))))
    return out[0] / out[1]


@reason(LESSON, "costs {h:.0%} of a computed one, so routing decides how much work a request "
               "makes.")
def routing_decides_work() -> Reason:
    """Effect: round-robin's prefill work per request over ring's. Cause: the discount on a
    cached token (a cached token at full cost: the routers' work is the same). Rival: the
    trace's draw (seeds 1, 2): within 10%."""
    h = fleet_config("ring", FAIL_AT).hit_cost
    return Reason(fields={"h": h}, effect="round-robin's prefill work per request over ring's",
                  base=_work_ratio(SEED), cause="the cached token's discount (full cost)",
                  changed=_work_ratio(SEED, 1.0), expect="down", at_least=0.5,
                  rival="the trace's draw (seeds 1, 2)",
                  rival_effects=(_work_ratio(SEED + 1), _work_ratio(SEED + 2)),
                  within=Within(name="10%", rel=0.1))


@claim(LESSON, "found in the cluster's [[prefix cache]] costs {h:.0%} of a computed one")
def hit_cost() -> dict[str, object]:
    cfg = fleet_config("ring", FAIL_AT)
    h = cfg.prefill_s(1000, 1000) / cfg.prefill_s(1000, 0)
    assert h == cfg.hit_cost
    # a cached token really is cheaper in the simulation: TTFT of a request started on arrival
    rec = fleet_run(60, FAIL_AT, "ring", SEED).records
    now = rec.admitted & (rec.start == rec.arrival) & (rec.reused_tokens > 0) & ~rec.requeued
    want = cfg.prefill_s(rec.prompt_tokens[now], rec.reused_tokens[now]) + cfg.decode_step_s
    assert now.any() and np.allclose(rec.ttft[now], want, rtol=1e-12, atol=1e-12)
    return {"h": h}


@claim(LESSON, "arrives between {a:g} and {b:g} s")
def burst_window() -> dict[str, object]:
    res = budget_runs(int(_default("long_burst")), int(_default("long_budget")),
                      int(_default("seed")))[0]
    longs = res.records.arrival[res.records.klass == 1]
    assert BURST_S[0] <= longs.min() and longs.max() <= BURST_S[1]
    return {"a": BURST_S[0], "b": BURST_S[1]}


@claim(LESSON, "[[TTFT]] climbs from {off1:.1f} s to {off2:.0f} s. A per-class concurrency cap "
               "that rejects holds it to {rej:.2f} s; the long class pays: the cap rejects "
               "{share:.0%} of its documents.")
def budgets_isolate() -> dict[str, object]:
    hero = TAB.hero
    assert hero.name == "long_burst" and hero.demo == 2 * hero.value  # "double the burst"
    budget, seed = int(_default("long_budget")), int(_default("seed"))
    (off1, rej1, _), (off2, rej2, _) = (budget_runs(int(b), budget, seed)
                                        for b in (hero.value, hero.demo))
    s = [r.summary.by_class("short").p95 for r in (off1, rej1, off2, rej2)]
    assert round(s[1], 2) == round(s[3], 2)  # the cap keeps the short class where it was
    assert rej2.summary.by_class("long").rejection_rate > 0.5
    assert rej2.summary.by_class("short").rejected == 0
    return {"off1": s[0], "off2": s[2], "rej": s[1],
            "share": rej2.summary.by_class("long").rejection_rate}


def _window_p95(res: SimResult, width: float = 10.0) -> list[float]:
    """The short class's P95 TTFT over the requests arriving in each `width` s window (the
    last, partial window left out)."""
    rec = res.records
    out = []
    for a in np.arange(0.0, float(rec.arrival.max()) - width, width):
        m = (rec.arrival >= a) & (rec.arrival < a + width) & rec.admitted & (rec.klass == 0)
        out.append(float(percentile(rec.ttft[m], 95)))
    return out


def _last_window_load(res: SimResult, width: float = 10.0) -> float:
    """Prefill load at the arrival rate of the last whole `width` s window."""
    arr = res.records.arrival
    a = np.arange(0.0, float(arr.max()) - width, width)[-1]
    rate = float(((arr >= a) & (arr < a + width)).sum()) / width
    return prefill_load(res, rate)


@claim(LESSON, "At {rate} requests/s with no failure, *least-loaded* routing finds {ll_hit:.0%} of "
               "prompt tokens cached; its last {w} s of arrivals ask for {ll_load:.0%} of "
               "[[prefill]] "
               "capacity: an overload. *ring* finds {ring_hit:.0%} and its short requests' P95 "
               "TTFT stays under {ring_top:.1f} s.")
def saturation_without_failure() -> dict[str, object]:
    rate = SATURATED_RATE
    ll, ring = _healthy(rate, "least_loaded"), _healthy(rate, "ring")
    assert ll.failover is None and ring.failover is None
    for res in (ll, ring):  # the load from first principles: each token 1, or hit_cost reused
        cfg, rec = res.config, res.records
        tokens = rec.prompt_tokens.mean() - rec.reused_tokens.mean() * (1 - cfg.hit_cost)
        rho = rate * tokens / cfg.prefill_tok_s / (cfg.slots * cfg.clusters)
        assert math.isclose(prefill_load(res, rate), rho, rel_tol=1e-9)
    offered = len(ll.records.arrival) / np.ptp(ll.records.arrival)
    assert offered < rate  # the nominal rate overstates the average: the trace ramps
    ll_load = _last_window_load(ll)
    assert ll_load > 1 > _last_window_load(ring)
    p95 = _window_p95(ll)
    assert all(b > a for a, b in zip(p95, p95[1:], strict=False))  # no steady value
    ring_top = max(_window_p95(ring))
    assert ring_top < math.ceil(ring_top * 10) / 10 <= 1.2
    return {"rate": rate, "w": 10, "ll_hit": ll.summary.hit_rate, "ll_load": ll_load,
            "ring_hit": ring.summary.hit_rate, "ring_top": math.ceil(ring_top * 10) / 10}


@reason(LESSON, "These hit rates treat a checkpoint as free; charging each its [[K3]] memory cuts "
               "*cache-aware*'s from {free:.0%} to {charged:.0%} at {rate} requests/s, and its "
               "capacity with it.")
def capacity_needs_hits() -> Reason:
    """The capacity sweep (no failure) and core.experiments.fleet_checkpoints (the same runs,
    each checkpoint group charged its K3 weight). Effect: cache-aware's goodput at 80
    requests/s. Cause: its hit rate (cut by the checkpoints' memory): goodput falls. Rival:
    the router's balance, not its hits (ring, nearly the same hit rate): within 15%."""
    healthy, k3 = capacity_sweeps()[0], k3_checkpoint_sweep()
    rate = 60
    c = RATES.index(rate)
    free, charged = (sw.hit_rate[sw.row("cache_aware"), c] for sw in (healthy, k3))
    at = RATES.index(SATURATED_RATE)
    good = healthy.goodput_rps[healthy.row("cache_aware"), at]
    return Reason(fields={"free": free, "charged": charged, "rate": rate},
                  effect=f"cache-aware's goodput at {SATURATED_RATE} requests/s", base=good,
                  cause="its hit rate (each checkpoint charged its K3 memory)",
                  changed=k3.goodput_rps[k3.row("cache_aware"), at], expect="down",
                  at_least=0.3 * good, rival="the router (ring, its hit rate close)",
                  rival_effects=(healthy.goodput_rps[healthy.row("ring"), at],),
                  within=Within(name="15%", rel=0.15))


@claim(LESSON, "The curves with a failure bend where the healthy ones already do: saturation, "
               "not failover.")
def saturation_not_failover() -> dict[str, object]:
    below, at = RATES[RATES.index(SATURATED_RATE) - 1], SATURATED_RATE
    healthy = [_healthy(r, "least_loaded").summary.overall.slo_attainment for r in (below, at)]
    failed = [fleet_run(r, FAIL_AT, "least_loaded", SEED).summary.overall.slo_attainment
              for r in (below, at)]
    assert healthy[0] > 0.95 and failed[0] > 0.9  # one rate lower, both serve nearly everything
    assert healthy[1] < 0.8 and failed[1] < 0.8  # at the rate, both collapse: no failure needed
    return {}


@claim(LESSON, "When c{k} dies, its queued requests are requeued and its sessions move to "
               "ring secondaries that lack their cache; c{k} rejoins cold {down:g} s later.")
def failover() -> dict[str, object]:
    res = fleet_run(int(_default("rate")), int(_default("fail_at")), "ring", int(_default("seed")))
    fo = res.failover
    assert fo is not None and fo.cluster == FAIL_CLUSTER
    assert fo.recover_at - fo.fail_at == DOWN_S
    rec = res.records
    assert fo.sessions_moved > 0 and fo.cache_lost_tokens > 0 and rec.requeued.any()
    moved = rec.moved
    assert (rec.reused_tokens[moved] / rec.prompt_tokens[moved]).mean() < res.summary.hit_rate
    return {"k": FAIL_CLUSTER, "down": DOWN_S}


@claim(LESSON, "at {rate} requests/s *ring* (short P95 {ring:.2f} s) beats *round-robin* "
               "({rr:.2f} s), which spreads requests evenly and throws the cache away.")
def balance_is_not_latency() -> dict[str, object]:
    rate, fail_at, seed = (int(_default(k)) for k in ("rate", "fail_at", "seed"))
    ring, rr = (fleet_run(rate, fail_at, r, seed).summary for r in ("ring", "round_robin"))
    assert ring.by_class("short").p95 < rr.by_class("short").p95
    assert rr.load.cv < ring.load.cv and rr.hit_rate < ring.hit_rate
    return {"rate": rate, "ring": ring.by_class("short").p95, "rr": rr.by_class("short").p95}


@claim(LESSON, "a short request holds {ws}, a long one {wl}: the long budget of {b} units is {k} "
               "long requests in flight")
def weights() -> dict[str, object]:
    ws, wl = DEMO_BUDGET.weights
    b = int(_default("long_budget"))
    assert budget_config("reject", b).budget.budgets[1] == b and b % wl == 0
    return {"ws": ws, "wl": wl, "b": b, "k": b // wl}


def _queue_rejects(seed: int, queue_limit: int) -> float:
    """Share of the long documents a queueing budget refuses at the tab's default burst."""
    d = TAB.defaults()
    burst = int(d["long_burst"]) / (BURST_S[1] - BURST_S[0])
    trace = long_burst_trace(SHORT_RATE, BURST_DURATION, burst, BURST_S, seed)
    cfg = budget_config("queue", int(d["long_budget"]))
    cfg = replace(cfg, budget=replace(cfg.budget, queue_limit=queue_limit))
    return simulate(trace, cfg).summary.by_class("long").rejection_rate


@reason(LESSON, "*bounded queue ({q})* makes a request wait and refuses once {q} of its class are "
               "waiting, so under this burst it rejects {share:.0%} of the long documents too.")
def bounded_queue() -> Reason:
    """Cause: the queue's bound (unbounded instead: nothing refused). Rival: the burst's draw
    (seeds 1, 2): within half its value."""
    q, seed = DEMO_BUDGET.queue_limit, int(_default("seed"))
    share = _queue_rejects(seed, q)
    queue = budget_runs(int(_default("long_burst")), int(_default("long_budget")),
                        seed)[2].summary.by_class("long")
    assert queue.deferred > 0 and queue.rejection_rate == share
    return Reason(fields={"q": q, "share": share}, effect="long documents refused",
                  base=share, cause="the queue's bound (none)", changed=_queue_rejects(seed, 10**9),
                  expect="down", at_least=share, rival="the burst's draw (seeds 1, 2)",
                  rival_effects=(_queue_rejects(seed + 1, q), _queue_rejects(seed + 2, q)),
                  within=Within(name="half its value", rel=0.5))


@claim(LESSON, "records each rejection as a {sentinel:,.0f} s TTFT. A P95 interpolates between "
               "neighbouring values: in a class of {n} requests, {m} rejections already make it "
               "{p95:,.0f} s and {m2} make it the sentinel itself (the WRONG panel), and isolation "
               "looks a million times worse than it is.")
def sentinel_threshold() -> dict[str, object]:
    n = 100
    rej = budget_runs(int(_default("long_burst")), int(_default("long_budget")),
                      int(_default("seed")))[1]
    rec = rej.records
    ttft = rec.ttft[rec.admitted & (rec.klass == 0)][:n]  # (n,) real admitted TTFTs
    pos = 0.95 * (n - 1)

    def naive(m: int) -> float:
        return naive_p95_with_rejections_as_sentinel(ttft, np.arange(n) < n - m)

    m = n - math.ceil(pos)  # the first count of rejections that reaches into the P95
    m2 = n - math.floor(pos)  # ... and the first that makes it the sentinel
    kept = ttft[: n - (m - 1)]
    assert naive(m - 1) == percentile(np.concatenate([kept, [SEED_SENTINEL] * (m - 1)]), 95)
    assert naive(m - 1) <= ttft.max() < naive(m) < SEED_SENTINEL == naive(m2)
    assert m / n == 0.05  # exactly 5% rejected is already far past every real TTFT
    long_p95 = rej.summary.by_class("long").p95
    naive_long = naive_p95_with_rejections_as_sentinel(rec.ttft[rec.klass == 1],
                                                       rec.admitted[rec.klass == 1])
    assert naive_long / long_p95 >= 1e6  # "a million times worse"
    return {"sentinel": SEED_SENTINEL, "n": n, "m": m, "p95": naive(m), "m2": m2}


@claim(LESSON, "One sweep (trace seed {seed}, c{k} down from {a} to {b:g} s)")
def sweep_scene() -> dict[str, object]:
    assert FAIL_AT == _default("fail_at") and SEED == _default("seed")
    cfg = fleet_config("ring", FAIL_AT)
    assert cfg.fail_cluster == FAIL_CLUSTER and cfg.recover_at == FAIL_AT + DOWN_S
    return {"seed": SEED, "k": FAIL_CLUSTER, "a": FAIL_AT, "b": FAIL_AT + DOWN_S}


@claim(LESSON, "over the {slots} prefill slots")
def prefill_slots() -> dict[str, object]:
    cfg = fleet_config("ring", FAIL_AT)
    return {"slots": cfg.slots * cfg.clusters}


@claim(LESSON, "charging each one its [[K3]] size ({g:.1f} blocks) cuts *cache-aware*'s hit rate "
               "at the defaults from {hit0:.0%} to {hit1:.0%} (no checkpoint spacing gets it above "
               "{best:.0%}) and its short P95 rises from {p0:.2f} s to {p1:.1f} s")
def checkpoint_memory() -> dict[str, object]:
    g = k3_group_blocks()
    base, charged = _checkpointed(1, 0.0), _checkpointed(1, g)
    assert base.config.group_cost == SimConfig().group_cost == 0.0  # the figures charge nothing
    best = max(_checkpointed(e, g).summary.hit_rate for e in (1, 2, 4, 8, 16))
    assert charged.summary.hit_rate < best < base.summary.hit_rate
    return {"g": g, "hit0": base.summary.hit_rate, "hit1": charged.summary.hit_rate,
            "best": best, "p0": base.summary.by_class("short").p95,
            "p1": charged.summary.by_class("short").p95}


# ---- going further: queueing -------------------------------------------------------------------

QUEUE_N = 200_000  # requests in each open-loop check of the formulas


@claim(LESSON, "one server's mean wait is ρ / ({one} − ρ) service times: {w50:.0f} at {r50:.0%}, "
               "{w80:.0f} at {r80:.0%}, {w90:.0f} at {r90:.0%}. Its P95 in the system, ln {t} / "
               "({one} − ρ), is {p50:.0f}, {p80:.0f} and {p90:.0f} service times: the tail blows "
               "up "
               "well before {full:.0%}. Past {full:.0%} nothing is steady")
def mm1_formulas() -> dict[str, object]:
    """The closed forms against a simulated single-server queue of QUEUE_N requests each: the
    mean wait and the P95 time in system within 5%."""
    rhos = (0.5, 0.8, 0.9)
    for rho in rhos:
        run = open_loop(rho, QUEUE_N, 0)
        assert abs(run.mean_wait / mm1_wait(rho) - 1) < 0.05
        assert abs(run.p95_system / mm1_p95(rho) - 1) < 0.05
    w = [mm1_wait(r) for r in rhos]
    p = [mm1_p95(r) for r in rhos]
    return {"one": 1, "w50": w[0], "r50": rhos[0], "w80": w[1], "r80": rhos[1], "w90": w[2],
            "r90": rhos[2], "t": 20, "p50": p[0], "p80": p[1], "p90": p[2], "full": 1.0}


@claim(LESSON, "at {rate} requests/s the fleet's short P95 climbs {p95} s over successive 10 s "
               "windows")
def overload_snapshot() -> dict[str, object]:
    p95 = _window_p95(_healthy(SATURATED_RATE, "least_loaded"))
    return {"rate": SATURATED_RATE, "p95": ", ".join(f"{x:.2f}" for x in p95)}


CLIENTS, THINK, RUN = 12, 10.0, 2000


@reason(LESSON, "A closed-loop test, {n} users each waiting for an answer and thinking {z:.0f} "
               "service times, asks for {demand:.1f} requests a service time yet measures a P95 "
               "of {closed:.0f} service times, because a slow server slows its own users; offered "
               "open loop, the same demand's P95 is {open:.0f} after {run:,} requests and still "
               "growing.")
def open_loop_is_honest() -> Reason:
    """Effect: the P95 time in system a test measures at 1.2 requests per service time. Cause:
    users that wait for their answers (open-loop arrivals instead). Rival: the run's length
    (ten times longer, closed loop): within 20%."""
    demand = CLIENTS / THINK
    closed, opened = closed_loop(CLIENTS, THINK, RUN, 0), open_loop(demand, RUN, 0)
    longer = open_loop(demand, 10 * RUN, 0)
    assert longer.p95_system > 2 * opened.p95_system  # still growing
    assert closed.throughput < 1 < demand  # the users slowed to what the server answers
    return Reason(fields={"n": CLIENTS, "z": THINK, "demand": demand,
                          "closed": closed.p95_system, "open": opened.p95_system, "run": RUN},
                  effect="P95 time in system a test measures (service times)",
                  base=closed.p95_system, cause="users waiting for answers (open loop instead)",
                  changed=opened.p95_system, expect="up", at_least=10 * closed.p95_system,
                  rival="the run's length (ten times longer)",
                  rival_effects=(closed_loop(CLIENTS, THINK, 10 * RUN, 0).p95_system,),
                  within=Within(name="20%", rel=0.2))
