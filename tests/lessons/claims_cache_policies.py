"""Claims of the Cache policies lesson (assets/lessons/cache_policies.md).

Synthetic numbers come from core.experts.synthetic_trace and replay at the tab's defaults; the
model's from the shipped routing trace (assets/model/trace.npz) replayed by core.experts, so
they follow the weights. Each "because" is checked from first principles: the cliff against
the trace's own stack distances and a decode-order argument, the floor against a live cache.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from core.dims import K3
from core.errors import ParamError
from core.experiments.cache_policies import capacities
from core.experts import (
    BudgetTooSmall,
    ExpertCache,
    ShardIndex,
    SlotsExhausted,
    compulsory_ceiling,
    hit_rate_curve,
    replay,
    synthetic_trace,
    zipf_popularity,
)
from core.experts.scenarios import N_EXPERTS, STRIDE, fixture_dir, run_scenario
from core.experts.working_set import lru_cliff, lru_curve, stack_distances, token_working_set
from core.model.config import ModelDims
from core.model.trace import TRACE_FILE, load, request_trace
from core.model.weights import ASSET_DIR
from tabs.cache_policies import TAB
from tests.lessons.registry import Reason, Within, claim, reason

LESSON = "cache_policies"


def _default(name: str) -> float:
    return TAB.control(name).value


def _synthetic(skew: float, persistence: float) -> np.ndarray:
    d = TAB.defaults()
    return synthetic_trace(int(d["tokens"]), 1, int(d["n_experts"]), int(d["topk"]), skew,
                           persistence, int(d["seed"]))


def _rates(trace: np.ndarray, c: int) -> dict[str, float]:
    return {p: replay(trace, c, p).hit_rate for p in ("lru", "lfu", "belady")}


@functools.cache
def _model(tokens: int | None = None) -> tuple[np.ndarray, int, int, int]:
    """(decode-order requests of the first `tokens` tokens (all: None), layers, E, top-k)."""
    t = load(ASSET_DIR / TRACE_FILE)
    n, layers, k = t.chosen.shape
    tokens = n if tokens is None else min(tokens, n)
    return request_trace(t)[: tokens * layers * k], layers, t.n_experts, k


def _tab_model() -> tuple[np.ndarray, int, int, int]:
    return _model(int(_default("tokens")))


@functools.cache
def _lru_lfu(tokens: int | None) -> tuple[np.ndarray, np.ndarray]:
    """LRU and LFU hit rates at every capacity 1..keys of the model trace."""
    reqs, layers, e, _ = _model(tokens)
    every = list(range(1, layers * e + 1))
    lfu = hit_rate_curve(reqs, every, ("lfu",))["lfu"]
    return lru_curve(reqs, every), lfu


@claim(LESSON, "Belady and the compulsory-miss ceiling (every expert's first use misses) bound "
               "caches without [[prefetch]]; loading ahead can beat both")
def bounds_without_prefetch() -> dict[str, object]:
    """Belady >= LRU, LFU everywhere on the tab's trace and never above the ceiling; the live
    cache's probe window (batch 4, get each twice) hits every get, above both bounds."""
    tr = _synthetic(_default("skew"), _default("persistence"))
    ceiling = compulsory_ceiling(tr)
    for c in capacities(int(_default("topk")), int(_default("n_experts"))):
        r = _rates(tr, int(c))
        assert r["belady"] >= max(r["lru"], r["lfu"]) and r["belady"] <= ceiling + 1e-12
    w0 = run_scenario("prefetch then consume", 8, 4, 4, 0).windows[0]
    gets = np.array([[0, e] for e in (0, 1, 2, 3, 0, 1, 2, 3)], np.int32)  # its get trace
    assert w0.stats.demand_requests == len(gets) and w0.stats.hits == len(gets)
    assert replay(gets, 8, "belady").hit_rate == compulsory_ceiling(gets) < 1.0
    return {}


@claim(LESSON, "at skew {s:g} and persistence {p:g} a cache of {c} hits {lru:.1%} with LRU "
               "(about C / E), {lfu:.1%} with LFU, yet {bel:.1%} with Belady")
def iid_uniform() -> dict[str, object]:
    c, e = int(_default("topk")) + 1, int(_default("n_experts"))
    r = _rates(_synthetic(0.0, 0.0), c)
    assert abs(r["lru"] - c / e) < 0.025 and abs(r["lfu"] - c / e) < 0.025  # online: alike
    assert r["belady"] > 3 * max(r["lru"], r["lfu"])  # the future still pays
    return {"s": 0.0, "p": 0.0, "c": c, "lru": r["lru"], "lfu": r["lfu"], "bel": r["belady"]}


@claim(LESSON, "Skew alone separates them: at skew {s:g}, LFU hits {lfu:.1%} against LRU's "
               "{lru:.1%}")
def skewed_iid() -> dict[str, object]:
    c = int(_default("topk")) + 1
    r = _rates(_synthetic(1.0, 0.0), c)
    assert r["lfu"] > 1.5 * r["lru"]  # not alike once popularity is skewed
    return {"s": 1.0, "lfu": r["lfu"], "lru": r["lru"]}


@claim(LESSON, "**Predict, then move skew from {hi:.1f} to {lo:.1f}:** which rule loses most? "
               "<details><summary>Answer</summary> LFU: counts barely separate hot experts from "
               "cold; persistence still rewards recency.")
def skew_hurts_lfu_most() -> dict[str, object]:
    hi, lo = _default("skew"), TAB.control("skew").demo
    pers = _default("persistence")
    caps = [int(c) for c in capacities(int(_default("topk")), int(_default("n_experts")))]
    a = hit_rate_curve(_synthetic(hi, pers), caps)
    b = hit_rate_curve(_synthetic(lo, pers), caps)
    drop = {p: float(np.mean(a[p] - b[p])) for p in a}
    assert max(drop, key=drop.get) == "lfu" and lo < hi
    assert b["lru"][0] > b["lfu"][0]  # at low skew recency wins where the cache is small
    return {"hi": hi, "lo": lo}


@claim(LESSON, "a token needs top-{k} in each of {layers} layers")
def model_geometry() -> dict[str, object]:
    _, layers, e, k = _tab_model()
    d = ModelDims()
    assert (layers, e, k) == (d.n_layers, d.n_experts, d.top_k)  # every layer is an MoE layer
    return {"k": k, "layers": layers}


@claim(LESSON, "LRU hits nothing below C = ({layers} − {one}) × {k} + {one} = {cliff}: between "
               "two uses of an expert, the other layers request at least {others} others")
def lru_cliff_claim() -> dict[str, object]:
    reqs, layers, _, k = _tab_model()
    cliff = lru_cliff(layers, k)
    assert cliff == (layers - 1) * k + 1
    assert replay(reqs, cliff - 1, "lru").hits == 0 < replay(reqs, cliff, "lru").hits
    d = stack_distances(reqs)
    others = int(d[d > 0].min()) - 1  # fewest distinct keys between two uses of one key
    assert others == (layers - 1) * k
    return {"layers": layers, "one": 1, "k": k, "cliff": cliff, "others": others}


@claim(LESSON, "at [[K3]] scale a layer has {e} experts, a token needs {layers} × {k} = {ws:,}")
def k3_working_set() -> dict[str, object]:
    layers = K3.n_moe
    ws = token_working_set(layers, K3.top_k)
    assert ws > K3.n_experts  # a token's set, not a layer, is what LRU must hold
    return {"e": K3.n_experts, "layers": layers, "k": K3.top_k, "ws": ws}


@claim(LESSON, "On these {tokens} tokens LFU beats LRU at every capacity from {lo} to {hi}; "
               "on longer traces")
def lfu_beats_lru() -> dict[str, object]:
    _, layers, e, k = _tab_model()
    lru, lfu = _lru_lfu(int(_default("tokens")))
    lo = k + 1  # the top-k floor: the smallest cache that runs
    wins = lfu > lru
    hi = int(np.argmin(wins[lo - 1:])) + lo - 1  # last capacity of the first unbroken run
    assert wins[lo - 1: hi].all() and hi >= layers * e * 0.9
    assert np.array_equal(lfu[hi:], lru[hi:])  # above: ties, nearly everything fits
    return {"tokens": int(_default("tokens")), "lo": lo, "hi": hi}


def _first_hit_capacity(layers: int, e: int, k: int = 2) -> int:
    """The smallest LRU cache with a hit on a decode-order synthetic trace: the shortest reuse
    stack distance (distinct keys since the last use, the key included)."""
    d = stack_distances(synthetic_trace(256, layers, e, k, 0.5, 0.5, 3))
    return int(d[d > 0].min())


@reason(LESSON, "[[decode]] visits every layer once per token, so between two uses of a key every "
               "other layer requests its top-k: LRU needs (layers − {one}) × top-k + {one} slots "
               "before its first hit, whatever the number of experts per layer.")
def cliff_law_any_e() -> Reason:
    """Decode-order synthetic traces (8 layers, top-2): cause, the layers visited between two
    uses (8 -> 4 layers: the cliff falls by 4 x top-k); rival, the experts per layer (3, 8, 64,
    512 at 8 layers): the cliff stays where the law puts it."""
    layers, k = 8, 2
    base = _first_hit_capacity(layers, 16, k)
    assert base == lru_cliff(layers, k)
    return Reason(fields={"one": 1}, effect="LRU's smallest cache with a hit (slots)", base=base,
                  cause="layers visited per token (8 -> 4)", changed=_first_hit_capacity(4, 16, k),
                  expect="down", at_least=4 * k, rival="experts per layer (3, 8, 64, 512)",
                  rival_effects=[_first_hit_capacity(layers, e, k) for e in (k + 1, 8, 64, 512)],
                  within=Within(name="exactly"))


@claim(LESSON, "LRU gets {c:.1%} at {cliff} slots, {w:.1%} at {ws} (one token's whole set) and "
               "then stays flat until about two tokens' sets fit")
def lru_steps() -> dict[str, object]:
    _, layers, _, k = _tab_model()
    lru, _ = _lru_lfu(int(_default("tokens")))
    cliff, ws = lru_cliff(layers, k), token_working_set(layers, k)
    plateau = lru[ws: ws + ws // 2]  # capacities ws + 1 .. 1.5 ws
    assert plateau.max() - plateau.min() < 0.03 and lru[2 * ws - 1] - plateau.max() > 0.08
    return {"c": lru[cliff - 1], "cliff": cliff, "w": lru[ws - 1], "ws": ws}


@claim(LESSON, "At K3 scale, LRU in decode order would need {c:,} slots before its first hit")
def k3_cliff() -> dict[str, object]:
    layers = K3.n_moe
    c = lru_cliff(layers, K3.top_k)
    k = K3.top_k  # two decode-order tokens of K3's shape: the same set, the last expert first
    order = [list(range(k)), [k - 1, *range(k - 1)]]
    tight = np.array([[la, e] for o in order for la in range(layers) for e in o], np.int32)
    d = stack_distances(tight)
    assert d[d > 0].min() == c and replay(tight, c - 1, "lru").hits == 0
    return {"c": c}


@claim(LESSON, "Here a token's set, {layers} × {k} = {ws}, equals E only by coincidence.")
def coincidence() -> dict[str, object]:
    _, layers, e, k = _tab_model()
    ws = token_working_set(layers, k)
    assert ws == e and lru_cliff(layers, k) != e
    return {"layers": layers, "k": k, "ws": ws}


@claim(LESSON, "Over the first {n} tokens LFU gets {f1:.1%} against LRU's {r1:.1%} at {c1} slots "
               "and {f2:.1%} against {r2:.1%} at {c2}")
def lfu_numbers() -> dict[str, object]:
    n = int(_default("tokens"))
    reqs, layers, e, k = _model(n)
    c1, c2 = token_working_set(layers, k), layers * e // 2
    lru, lfu = _lru_lfu(n)
    for c in (c1, c2):  # the one-pass LRU curve is the engine's replay
        assert lru[c - 1] == replay(reqs, c, "lru").hit_rate
    return {"n": n, "f1": lfu[c1 - 1], "r1": lru[c1 - 1], "c1": c1, "f2": lfu[c2 - 1],
            "r2": lru[c2 - 1], "c2": c2}


def _relabelled(n: int, block: int, seed: int = 0) -> np.ndarray:
    """The first n tokens' requests with each layer's expert ids permuted afresh every `block`
    tokens: the same order and repeats within a block, each layer's popularity spread flat."""
    reqs, layers, e, k = _model(n)
    tr = reqs.reshape(n, layers, k, 2).copy()
    rng = np.random.default_rng(seed)
    for b in range(0, n, block):
        for la in range(layers):
            tr[b:b + block, la, :, 1] = rng.permutation(e)[tr[b:b + block, la, :, 1]]
    return tr.reshape(-1, 2)


def _top_share(n: int, top: int) -> list[float]:
    """Per layer, the share of its picks that go to its `top` most picked experts."""
    reqs, layers, e, k = _model(n)
    tr = reqs.reshape(n, layers, k, 2)
    out = []
    for la in range(layers):
        c = np.sort(np.bincount(tr[:, la, :, 1].ravel(), minlength=e))[::-1]
        out.append(float(c[:top].sum() / c.sum()))
    return out


@claim(LESSON, "Below {cliff} slots decode's loop through the layers is longer than the cache, "
               "LRU's worst case.")
def loop_below_cliff() -> dict[str, object]:
    reqs, layers, _, k = _tab_model()
    cliff = lru_cliff(layers, k)
    assert replay(reqs, cliff - 1, "lru").hits == 0  # the loop: LRU hits nothing
    return {"cliff": cliff}


@reason(LESSON, "From {c} slots a token's loop fits, and LFU wins because each layer's routing "
               "is skewed: its top {top} of {e} experts take {lo:.0%} to {hi:.0%} of its picks, "
               "and LFU keeps them. Relabel each layer's experts every {block} tokens, "
               "flattening that skew but keeping the order, and LRU wins by {lose:.1f} points at "
               "{c} slots.")
def skew_makes_lfu_win() -> Reason:
    """Effect: LFU's hit rate minus LRU's at 16 slots (first 256 tokens). Cause: each layer's
    skew (flattened by relabelling): LRU wins. Rival: the loop being longer than the cache
    (at 64 slots, four tokens' loops fit): the advantage stays within 3 points."""
    n = int(_default("tokens"))
    reqs, layers, e, k = _model(n)
    c, block, top = token_working_set(layers, k), 32, 4
    assert lru_cliff(layers, k) <= c
    lru, lfu = _lru_lfu(n)
    flat = _relabelled(n, block)
    flat_adv = replay(flat, c, "lfu").hit_rate - replay(flat, c, "lru").hit_rate
    shares = _top_share(n, top)
    return Reason(
        fields={"c": c, "top": top, "e": e, "lo": min(shares), "hi": max(shares), "block": block,
                "lose": -100 * flat_adv},
        effect=f"LFU's hit rate minus LRU's at {c} slots", base=float(lfu[c - 1] - lru[c - 1]),
        cause=f"each layer's skew (experts relabelled every {block} tokens)", changed=flat_adv,
        expect="down", at_least=0.05, rival=f"the loop against the cache ({c} -> {4 * c} slots)",
        rival_effects=(float(lfu[4 * c - 1] - lru[4 * c - 1]),),
        within=Within(name="3 points", abs=0.03))


@claim(LESSON, "Over the whole trace ({n:,} tokens) the counts go stale and LRU wins at {a} to "
               "{b} slots and again near a full cache")
def lfu_goes_stale() -> dict[str, object]:
    return _stale()


@functools.cache
def _stale() -> dict[str, object]:
    reqs, layers, e, k = _model(None)
    keys = layers * e
    ws = token_working_set(layers, k)
    window = list(range(lru_cliff(layers, k), ws + ws // 2 + 1))
    lfu = hit_rate_curve(reqs, window + [keys - 8], ("lfu",))["lfu"]
    lru = lru_curve(reqs, window + [keys - 8])
    lose = [c for c, f, r in zip(window, lfu, lru, strict=False) if f < r]
    a, b = lose[0], lose[-1]
    assert lose == list(range(a, b + 1)) and b < window[-1]  # one run, inside the window
    assert lfu[-1] < lru[-1]  # near a full cache
    short_lru, short_lfu = _lru_lfu(int(_default("tokens")))
    assert (short_lfu[a - 1: b] > short_lru[a - 1: b]).all()  # a short trace: LFU still wins
    return {"n": len(reqs) // (layers * k), "a": a, "b": b}


@claim(LESSON, "The live cache refuses fewer than top-k + {one} slots")
def floor_refused() -> dict[str, object]:
    k = 4
    index = ShardIndex.open(fixture_dir())
    with pytest.raises(BudgetTooSmall):
        ExpertCache(index, 1, N_EXPERTS, k, k * STRIDE)
    ExpertCache(index, 1, N_EXPERTS, k, (k + 1) * STRIDE).close()
    return {"one": 1}


@reason(LESSON, "the extra slot is where that load lands, so it evicts none of them")
def extra_slot() -> Reason:
    """k + 1 slots: a layer's k views in use, the next load takes the spare slot and no view's
    bytes change; a second load finds only slots in use and is refused. Cause: the spare slot
    (k slots: the cache refuses them, so LRU's replay of the same gets shows the eviction).
    Rival: which expert the next load is (each other expert): none evicted."""
    k = 4
    with ExpertCache(ShardIndex.open(fixture_dir()), 1, N_EXPERTS, k, (k + 1) * STRIDE) as c:
        for e in range(k + 1):  # fill the spare slot first, so it is the oldest
            c.get(0, e)
        c.begin_layer()
        views = [c.get(0, e) for e in range(1, k + 1)]  # the layer in use
        before = [v.payload() for v in views]
        c.get(0, k + 1)  # the next load: evicts expert 0, in the spare slot
        kept = sum(c.resident(0, e) is not None for e in range(1, k + 1))
        assert all(v.payload() == b for v, b in zip(views, before, strict=True))
        with pytest.raises(SlotsExhausted):
            c.get(0, k + 2)

    def survivors(slots: int, nxt: int) -> int:  # LRU's replay: in-use experts still held
        gets = [*range(k + 1), *range(1, k + 1), nxt]
        held: list[int] = []
        for e in gets:
            held = [x for x in held if x != e] + [e]
            held = held[-slots:]
        return sum(e in held for e in range(1, k + 1))
    assert survivors(k + 1, k + 1) == kept == k
    return Reason(effect="the layer's in-use experts still held after the next load",
                  base=kept, cause="the spare slot (top-k slots instead of top-k + 1)",
                  changed=survivors(k, k + 1), expect="down", at_least=1,
                  rival="which expert the next load is",
                  rival_effects=[survivors(k + 1, e) for e in range(k + 1, N_EXPERTS)],
                  within=Within(name="exactly"))


@claim(LESSON, "init fails below top-k + {one} slots, at most slots − top-k − {one} may be pinned")
def floor_three_ways() -> dict[str, object]:
    k, slots = 2, 5
    with ExpertCache(ShardIndex.open(fixture_dir()), 1, N_EXPERTS, k, slots * STRIDE) as c:
        for e in range(slots):
            c.get(0, e)
        c.begin_layer()
        limit = slots - k - 1
        for e in range(limit):
            c.pin(0, e, True)
        with pytest.raises(ParamError):
            c.pin(0, limit, True)
    return {"one": 1}


@claim(LESSON, "Popularity p(r) ∝ {one} / (r + {one})^s")
def zipf_formula() -> dict[str, object]:
    for e, s in ((8, 0.0), (64, 1.0), (16, 1.7)):
        w = 1.0 / (np.arange(e) + 1.0) ** s
        assert np.allclose(zipf_popularity(e, s), w / w.sum())
    return {"one": 1}
