"""Claims of the Fleet budgets and simulation lesson (assets/lessons/fleet_sim.md), computed by
running core.fleet's simulator on the tab's scenes (core.experiments.fleet_sim builds their
configs)."""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np

from core.dims import k3_group_blocks
from core.experiments.fleet_sim import (
    BURST_S,
    DOWN_S,
    FAIL_AT,
    FAIL_CLUSTER,
    RATES,
    SEED,
    budget_config,
    budget_runs,
    fleet_config,
    fleet_run,
    fleet_trace,
)
from core.fleet.capacity import prefill_load
from core.fleet.config import DEMO_BUDGET, SimConfig
from core.fleet.metrics import SEED_SENTINEL, naive_p95_with_rejections_as_sentinel, percentile
from core.fleet.result import SimResult
from core.fleet.simulator import simulate
from tabs.fleet_sim import TAB
from tests.lessons.registry import claim

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
               "that rejects keeps it at {rej:.2f} s; the long class pays in rejections.")
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
    return {"off1": s[0], "off2": s[2], "rej": s[1]}


@claim(LESSON, "*least_loaded* at {rate} requests/s finds {ll_hit:.0%} of prompt tokens cached, "
               "asks the prefill slots for {ll_load:.0%} of what they can do, and its short P95 "
               "reaches {ll_p95:.1f} s; *ring* finds {ring_hit:.0%} and stays at {ring_p95:.2f} s.")
def saturation_without_failure() -> dict[str, object]:
    rate = SATURATED_RATE
    ll, ring = _healthy(rate, "least_loaded"), _healthy(rate, "ring")
    assert ll.failover is None and ring.failover is None
    out = {"rate": rate}
    for tag, res in (("ll", ll), ("ring", ring)):
        cfg, rec = res.config, res.records
        s = res.summary
        # the load from first principles: each token costs 1, or hit_cost when reused
        tokens = rec.prompt_tokens.mean() - rec.reused_tokens.mean() * (1 - cfg.hit_cost)
        rho = rate * tokens / cfg.prefill_tok_s / (cfg.slots * cfg.clusters)
        assert math.isclose(prefill_load(res, rate), rho, rel_tol=1e-9)
        out |= {f"{tag}_hit": s.hit_rate, f"{tag}_load": rho, f"{tag}_p95": s.by_class("short").p95}
    assert out["ll_load"] > 1 > out["ring_load"]  # saturation is the lower hit rate's prefill
    assert out["ll_hit"] < out["ring_hit"]
    return out


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


@claim(LESSON, "at {rate} requests/s *ring* (short P95 {ring:.2f} s) beats *round_robin* "
               "({rr:.2f} s), which spreads requests evenly and throws the cache away.")
def balance_is_not_latency() -> dict[str, object]:
    rate, fail_at, seed = (int(_default(k)) for k in ("rate", "fail_at", "seed"))
    ring, rr = (fleet_run(rate, fail_at, r, seed).summary for r in ("ring", "round_robin"))
    assert ring.by_class("short").p95 < rr.by_class("short").p95
    assert rr.load.cv < ring.load.cv and rr.hit_rate < ring.hit_rate
    return {"rate": rate, "ring": ring.by_class("short").p95, "rr": rr.by_class("short").p95}


@claim(LESSON, "a short request holds {ws}, a long one {wl}, so the long budget of {b} units means "
               "{k} long requests in flight")
def weights() -> dict[str, object]:
    ws, wl = DEMO_BUDGET.weights
    b = int(_default("long_budget"))
    assert budget_config("reject", b).budget.budgets[1] == b and b % wl == 0
    return {"ws": ws, "wl": wl, "b": b, "k": b // wl}


@claim(LESSON, "*bounded queue ({q})* makes a request wait and refuses once {q} of its class are "
               "waiting, so under this burst it rejects too")
def bounded_queue() -> dict[str, object]:
    q = DEMO_BUDGET.queue_limit
    queue = budget_runs(int(_default("long_burst")), int(_default("long_budget")),
                        int(_default("seed")))[2].summary.by_class("long")
    assert queue.deferred > 0 and queue.rejected > 0
    return {"q": q}


@claim(LESSON, "recorded each rejection as a {sentinel:,.0f} s TTFT. A P95 interpolates between "
               "neighbouring values: in a class of {n} requests, {m} rejections already make it "
               "{p95:,.0f} s and {m2} make it the sentinel itself (the WRONG panel), so isolation "
               "looked a million times worse than it was.")
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


@claim(LESSON, "charging each one its [[K3]] size ({g:.1f} blocks) cuts *cache_aware*'s hit rate "
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
