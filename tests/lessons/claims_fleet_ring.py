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
from core.fleet.metrics import load_stats
from core.fleet.ring import MAX_VNODES, ConsistentHashRing, bounded_capacity
from core.fleet.ring_arrays import (
    cluster_ids,
    keyspace_shares,
    ring_view,
    route_counts,
    route_keys,
    session_array,
)
from core.fleet.spread import noise_floor_cv, rule_of_thumb_cv
from core.fleet.spread_arrays import bounded_sweep, removal_view, share_sweep
from tabs.fleet_ring import TAB
from tabs.fleet_ring.bounded import ZIPF
from tests.lessons.registry import Reason, Within, claim, reason

LESSON = "fleet_ring"


def _default(name: str) -> float:
    return TAB.control(name).value


@functools.cache
def _draws(clusters: int):
    return share_sweep(clusters, SWEEP_V, DRAWS)


@claim(LESSON, "move the slider from {v0} to {v1} [[vnodes]]")
def hero_range() -> dict[str, object]:
    hero = TAB.hero
    assert hero.name == "vnodes" and hero.demo > hero.value
    return {"v0": int(hero.value), "v1": int(hero.demo)}


@reason(LESSON, "A cluster's share is a sum of V arcs, so the [[CV]] of the shares falls like "
                "1/√V: {k}× the vnodes, about {s}× less skew")
def sqrt_rule() -> Reason:
    """Effect: the CV of the exact keyspace shares, mean over the ring draws, at the default
    V. Cause: the arcs summed (V -> the demo's V): down by at least 0.8 x the rule's factor.
    Rival: the number of clusters (the default -> 12, 16, the slider's top) with V held: the
    rule has no N in it, so the CV stays within a tenth."""
    v0, v1 = int(TAB.hero.value), int(TAB.hero.demo)
    k = v1 // v0
    s = math.isqrt(k)
    assert s * s == k and rule_of_thumb_cv(v0) / rule_of_thumb_cv(v1) == s
    n = int(_default("clusters"))
    cv = _draws(n).cv.mean(axis=0)  # mean CV over ring draws at each V
    base, changed = float(cv[SWEEP_V.index(v0)]), float(cv[SWEEP_V.index(v1)])
    rival = [float(_draws(m).cv.mean(axis=0)[SWEEP_V.index(v0)])
             for m in (12, int(TAB.control("clusters").maximum)) if m != n]
    return Reason(fields={"k": k, "s": s}, effect="CV of the keyspace shares (mean over draws)",
                  base=base, cause=f"the arcs per cluster (V = {v0} -> {v1})", changed=changed,
                  expect="down", at_least=base - base / (0.8 * s),
                  rival="the number of clusters (12, 16)", rival_effects=rival,
                  within=Within(name="a tenth", rel=0.10))


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
            view, hashes = ring_view(n, v, d), session_array(sessions)
            before, secondary = route_keys(view, hashes)
            rest = view.without(REMOVED)
            after = rest.owners[np.searchsorted(rest.points, hashes) % rest.points.size]
            moved = before != after
            assert np.all(before[moved] == REMOVED) and np.all(after[moved] == secondary[moved])
            assert r.moved == int(moved.sum()) and r.to_old_secondary == 1.0
            assert abs(r.moved_fraction - r.removed_share) < 4 * math.sqrt(1 / sessions)
    # distance of the removed cluster's share from 1/N over the ring draws, few vs many vnodes
    dev = {v: np.mean([abs(keyspace_shares(ring_view(n, v, d))[REMOVED] - 1 / n) for d in DRAWS])
           for v in (8, 256)}
    assert dev[8] > 3 * dev[256]
    return {"r": REMOVED}


def _hair(requests: int, seed: int) -> tuple[float, int, int]:
    """(the hottest cluster over the mean, minus c; its load; the final whole-request cap) for
    bounded loads at the tab's defaults over Zipf-skewed keys."""
    n, c, v = int(_default("clusters")), float(_default("c")), int(_default("vnodes"))
    run = bounded_sweep((c,), ZIPF[1][0], n, v, PREFIXES, requests, seed, draw=seed)[0]
    cap = math.ceil(c * requests / n)
    assert run.cap == cap and int(run.loads.max()) <= cap  # never above the cap
    return float(run.loads.max() / run.loads.mean() - c), int(run.loads.max()), cap


@reason(LESSON, "The cap counts whole requests, so the hottest cluster may sit a hair above c × "
                "the mean ({cap} of {requests:,} requests over {n} clusters at c = {c:g}: "
                "{ratio:.3f}×), but never above the cap.")
def bounded_hair() -> Reason:
    """Effect: the hottest cluster's load over the mean, minus c. Cause: whole requests (the
    request count made a multiple of n / c, so c × mean is itself whole: the hair must go to
    zero or below). Rival: the Zipf draw (seeds 1 .. 4, the cause held): the same hair."""
    n, c, seed = int(_default("clusters")), float(_default("c")), int(_default("seed"))
    hair, hottest, cap = _hair(REQUESTS, seed)
    assert hottest == cap and c * REQUESTS / n != cap  # full, at a cap rounded up
    whole = [r for r in range(REQUESTS, REQUESTS + 64) if (c * r / n).is_integer()][:2]
    assert whole and all(c * r / n == math.ceil(c * r / n) for r in whole)
    return Reason(fields={"cap": cap, "requests": REQUESTS, "n": n, "c": c, "ratio": hair + c},
                  effect="hottest cluster / mean − c", base=hair,
                  cause=f"whole requests (requests = {whole}: c × mean whole)",
                  changed=[_hair(r, seed)[0] for r in whole], expect="down", at_least=hair,
                  rival="the Zipf draw (seeds 1 .. 4)",
                  rival_effects=[_hair(REQUESTS, sd)[0] for sd in range(1, 5) if sd != seed],
                  within=Within(name="the same hair (1e-9)", abs=1e-9))


def _chart_cvs(n: int, v: int, sessions: int, blocks: int) -> np.ndarray:
    """The CV of sessions per cluster a bar chart shows, for `blocks` disjoint sets of
    `sessions` session keys, on ring draw 0."""
    hashes = session_array(sessions * blocks)
    view = ring_view(n, v, 0)
    return np.array([load_stats(route_counts(view, hashes[i * sessions:(i + 1) * sessions])).cv
                     for i in range(blocks)])


@reason(LESSON, "√((N − 1)/S). With {s} sessions over {n} clusters that is ±{cv:.0%} per cluster "
                "({mean:.0f} ± {sd:.0f} sessions each), more than the ring's own skew at "
                "V = {v} (CV {skew:.2f}), so a bar chart of a few hundred sessions cannot judge "
                "a ring.")
def noise_floor() -> Reason:
    """Effect: the CV a chart of S sessions shows at V = 128 (mean over 64 disjoint session
    sets). Cause: the sampling noise (S -> the slider's 40,000 sessions): the chart falls at
    least half way to the ring's own skew. Rival: the ring (V = 128 -> 4,096, a nearly fair
    ring) with S held: the chart moves less than one chart's own sampling spread (its SD over
    the session sets), so no single chart can tell the two rings apart."""
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
    chart = _chart_cvs(n, v, s, 64)
    many = int(TAB.control("sessions").maximum)
    ring_skew = float(_draws(n).cv[0, SWEEP_V.index(v)])  # draw 0's own skew
    big = float(_chart_cvs(n, v, many, 1)[0])
    fair = float(_chart_cvs(n, MAX_VNODES, s, 64).mean())
    return Reason(fields={"s": s, "n": n, "cv": cv, "mean": mean, "sd": cv * mean, "v": v,
                          "skew": skew},
                  effect=f"the CV a chart of {s} sessions shows at V = {v}",
                  base=float(chart.mean()), cause=f"the sampling noise (S = {s} -> {many:,})",
                  changed=big, expect="down", at_least=(float(chart.mean()) - ring_skew) / 2,
                  rival=f"the ring (V = {v} -> {MAX_VNODES}, nearly fair), S held",
                  rival_effects=[fair],
                  within=Within(name="one chart's sampling SD", abs=float(chart.std())))


@claim(LESSON, "Set the sessions slider to {s} to see the floor. A common mistake is to judge "
               "balance that way, with V = {v}.")
def common_mistake() -> dict[str, object]:
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


@claim(LESSON, "⌈c · (placed + 1) / live⌉: a cluster takes a request only while below that "
               "bound, and the bound only rises, to ⌈c · mean⌉ at the last request; no cluster "
               "ends above it.")
def bounded_rule() -> dict[str, object]:
    assert bounded_capacity(99, 8, 1.25) == math.ceil(1.25 * 100 / 8)
    for seed in range(3):
        for s, _, _ in ZIPF:
            for run in bounded_sweep((1.0, 1.05, 1.25, 1.5), s, 8, 8, PREFIXES, REQUESTS, seed,
                                     draw=seed):
                assert int(run.loads.max()) <= math.ceil(run.c * REQUESTS / 8)
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
