"""Claims of the Fleet ring lesson (assets/lessons/fleet_ring.md), computed from core.fleet."""

from __future__ import annotations

import functools
import math

import numpy as np

from core.experiments.fleet_ring import (
    DRAWS,
    PREFIXES,
    REMOVED,
    REQUESTS,
    SEED_VNODES,
    SWEEP_V,
)
from core.fleet.ring import ConsistentHashRing, bounded_capacity
from core.fleet.ring_arrays import (
    cluster_ids,
    keyspace_shares,
    ring_view,
    route_keys,
    session_array,
)
from core.fleet.spread import noise_floor_cv, rule_of_thumb_cv
from core.fleet.spread_arrays import bounded_sweep, removal_view, share_sweep
from tabs.fleet_ring import TAB
from tabs.fleet_ring.bounded import ZIPF
from tests.lessons.registry import claim

LESSON = "fleet_ring"


def _default(name: str) -> float:
    return TAB.control(name).value


@functools.cache
def _draws(clusters: int):
    return share_sweep(clusters, SWEEP_V, DRAWS)


@claim(LESSON, "move the hero slider from {v0} to {v1} [[vnodes]]")
def hero_range() -> dict[str, object]:
    hero = TAB.hero
    assert hero.name == "vnodes" and hero.demo > hero.value
    return {"v0": int(hero.value), "v1": int(hero.demo)}


@claim(LESSON, "the [[CV]] of the shares falls like 1/√V: {k}× the vnodes, about {s}× less skew")
def sqrt_rule() -> dict[str, object]:
    v0, v1 = int(TAB.hero.value), int(TAB.hero.demo)
    k = v1 // v0
    s = math.isqrt(k)
    assert s * s == k and rule_of_thumb_cv(v0) / rule_of_thumb_cv(v1) == s
    cv = _draws(int(_default("clusters"))).cv.mean(axis=0)  # mean CV over ring draws at each V
    measured = cv[SWEEP_V.index(v0)] / cv[SWEEP_V.index(v1)]
    assert abs(measured / s - 1) < 0.25, measured  # the rule holds on the real rings
    return {"k": k, "s": s}


@claim(LESSON, "at V = {v} the hottest cluster carries between {lo:.2f}× and {hi:.2f}× the mean "
               "load, depending on the ring draw")
def draw_spread() -> dict[str, object]:
    v = int(TAB.hero.value)
    mx = _draws(int(_default("clusters"))).max_over_mean[:, SWEEP_V.index(v)]  # (draws,)
    assert mx.size == len(DRAWS) >= 10 and mx.max() / mx.min() > 1.3  # one draw is an anecdote
    return {"v": v, "lo": float(mx.min()), "hi": float(mx.max())}


@claim(LESSON, "remove c{r} and only c{r}'s sessions move, each to its old secondary. They are "
               "c{r}'s share of the keyspace, close to 1/N only when V is large")
def removal() -> dict[str, object]:
    n = int(_default("clusters"))
    sessions = int(_default("sessions"))
    for v in (1, 8, 128):
        for d in (0, 1, 2):
            r = removal_view(n, v, sessions, REMOVED, d)
            assert r.only_removed_moved and r.to_old_secondary == 1.0
            assert abs(r.moved_fraction - r.removed_share) < 4 * math.sqrt(1 / sessions)
    # distance of the removed cluster's share from 1/N over the ring draws, few vs many vnodes
    dev = {v: np.mean([abs(keyspace_shares(ring_view(n, v, d))[REMOVED] - 1 / n) for d in DRAWS])
           for v in (8, 256)}
    assert dev[8] > 3 * dev[256]
    return {"r": REMOVED}


@claim(LESSON, "({cap} of {requests:,} requests over {n} clusters at c = {c:g}: {ratio:.3f}×)")
def bounded_hair() -> dict[str, object]:
    n, c, v, seed = (int(_default("clusters")), float(_default("c")), int(_default("vnodes")),
                     int(_default("seed")))
    hot_s = ZIPF[1][0]
    run = bounded_sweep((c,), hot_s, n, v, PREFIXES, REQUESTS, seed, draw=seed)[0]
    cap = math.ceil(c * REQUESTS / n)
    assert run.cap == cap == bounded_capacity(REQUESTS - 1, n, c)
    assert int(run.loads.max()) == cap  # the hottest cluster is full, at the whole-request cap
    assert run.max_over_mean > c  # a hair above c x mean: the bound is not c x mean
    return {"cap": cap, "requests": REQUESTS, "n": n, "c": c, "ratio": run.max_over_mean}


@claim(LESSON, "√((N − 1)/S). With {s} sessions over {n} clusters that is ±{cv:.0%} per cluster "
               "({mean:.0f} ± {sd:.0f} sessions each), more than the ring's own skew at "
               "V = {v} (CV {skew:.2f})")
def noise_floor() -> dict[str, object]:
    s, n = int(TAB.control("sessions").demo), int(_default("clusters"))
    cv = noise_floor_cv(n, s)
    assert cv == math.sqrt((n - 1) / s)
    # a perfectly fair "ring": uniform random keys; the CV of the counts matches the formula
    rng = np.random.default_rng(0)
    counts = np.array([np.bincount(rng.integers(0, n, s), minlength=n) for _ in range(2000)])
    sim = np.sqrt(np.mean((counts.std(axis=1) / counts.mean(axis=1)) ** 2))
    assert abs(sim / cv - 1) < 0.05
    v = int(TAB.hero.demo)
    skew = float(_draws(n).cv[:, SWEEP_V.index(v)].mean())
    assert cv > skew
    mean = s / n
    return {"s": s, "n": n, "cv": cv, "mean": mean, "sd": cv * mean, "v": v, "skew": skew}


@claim(LESSON, "Set the sessions slider to {s} to see the floor. A naive design judged balance "
               "that way, with V = {v}.")
def naive_design() -> dict[str, object]:
    sessions = TAB.control("sessions")
    assert sessions.minimum <= sessions.demo <= sessions.maximum
    assert SEED_VNODES == TAB.hero.value
    return {"s": int(sessions.demo), "v": SEED_VNODES}


@claim(LESSON, "draw {d} is the ring the simulation tab uses")
def draw_zero() -> dict[str, object]:
    n, v = 8, 128
    assert cluster_ids(n, 0) == list(range(n))
    ring = ConsistentHashRing(range(n), vnodes=v)
    hashes = session_array(2000)
    primary, _ = route_keys(ring_view(n, v, 0), hashes)
    assert [ring.route_hash(int(h))[0] for h in hashes] == primary.tolist()
    return {"d": 0}


@claim(LESSON, "At the default V = {v}, c{r} owns {share:.1%} of the keyspace (1/N is "
               "{fair:.1%}) and its sessions land on {k} of the {survivors} survivors.")
def removal_numbers() -> dict[str, object]:
    n, v, s, d = (int(_default("clusters")), int(_default("vnodes")), int(_default("sessions")),
                  int(_default("seed")))
    r = removal_view(n, v, s, REMOVED, d)
    assert r.receivers < n - 1  # with few vnodes the moved sessions pile onto a few clusters
    return {"v": v, "r": REMOVED, "share": r.removed_share, "fair": 1 / n, "k": r.receivers,
            "survivors": n - 1}


@claim(LESSON, "⌈c · (placed + 1) / live⌉; loads only grow, so no cluster ends above "
               "⌈c · mean⌉")
def bounded_rule() -> dict[str, object]:
    assert bounded_capacity(99, 8, 1.25) == math.ceil(1.25 * 100 / 8)
    for seed in range(3):
        for s, _, _ in ZIPF:
            for run in bounded_sweep((1.0, 1.05, 1.25, 1.5), s, 8, 8, PREFIXES, REQUESTS, seed,
                                     draw=seed):
                assert run.within_cap
    return {}


@claim(LESSON, "With Zipf-skewed prefixes at c = {c:g}, {hot:.0%} of requests stay on their "
               "ring primary ({flat:.0%} for uniform keys); without the bound the hottest "
               "cluster carries {free:.2f}× the mean.")
def affinity() -> dict[str, object]:
    n, c, v, seed = (int(_default("clusters")), float(_default("c")), int(_default("vnodes")),
                     int(_default("seed")))
    (flat_s, _, _), (hot_s, _, _) = ZIPF
    hot, free = bounded_sweep((c, math.inf), hot_s, n, v, PREFIXES, REQUESTS, seed, draw=seed)
    flat = bounded_sweep((c,), flat_s, n, v, PREFIXES, REQUESTS, seed, draw=seed)[0]
    assert free.on_primary == 1.0 and hot.on_primary < flat.on_primary < 1.0
    return {"c": c, "hot": hot.on_primary, "flat": flat.on_primary, "free": free.max_over_mean}
