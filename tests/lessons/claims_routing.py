"""Claims of assets/lessons/routing.md, computed from the shipped sweep
(core.experiments.routing_sweep) and core.routing itself, each checked by its reason.

The sweep is the engine's own closed-loop run (tests/core/experiments/test_routing_sweep.py
recomputes a sample of it exactly); claims read it, so each stays fast. The tab's defaults name
the setting.
"""

from __future__ import annotations

import functools

import numpy as np

from core.experiments.routing_grid import capacities, tab_route, windows
from core.experiments.routing_sweep import CapacitySweep, load
from core.model.manifest import ASSET_DIR, dims_of, read_manifest
from core.model.trace import TRACE_FILE
from core.model.trace import load as load_trace
from core.routing import RouteConfig
from tabs.routing import TAB
from tests.lessons.registry import claim

LESSON = "routing"
D = dims_of(read_manifest())


@functools.cache
def sweep(capacity: int | None = None) -> CapacitySweep:
    return load(capacity if capacity is not None else int(TAB.control("capacity").value))


def _setting(**override: object) -> RouteConfig:
    v = {**TAB.defaults(), **override}
    return tab_route(str(v["method"]), int(v["M"]), int(v["J"]), float(v["alpha"]), D)


def _arms(**override: object):
    return sweep().arms(_setting(**override))


@claim(LESSON, "scores all {E} experts and keeps the best {k}")
def shape() -> dict[str, object]:
    assert D.top_k < D.n_experts
    return {"E": D.n_experts, "k": D.top_k}


@claim(LESSON, "a quarter of them: {cap} of the {total} experts")
def quarter() -> dict[str, object]:
    cap, total = int(TAB.control("capacity").value), D.n_layers * D.n_experts
    assert cap * 4 == total and cap in capacities(D)
    return {"cap": cap, "total": total}


@claim(LESSON, "Always keep the top {J} expert")
def sacred() -> dict[str, object]:
    cfg = _setting()
    assert cfg.method == "max_rank" and cfg.J == 1 and not cfg.stock
    return {"J": cfg.J}


@claim(LESSON, "among the first {M} ranks")
def window() -> dict[str, object]:
    cfg = _setting()
    assert D.top_k < cfg.M < D.n_experts
    return {"M": cfg.M}


@claim(LESSON, "rate rises from {stock:.0%} to {routing:.0%}")
def routing_hits() -> dict[str, object]:
    a = _arms()
    assert a["routing"].hit_rate > a["stock"].hit_rate and a["routing"].swaps > 0
    return {"stock": a["stock"].hit_rate, "routing": a["routing"].hit_rate}


@claim(LESSON, "worse by {dnll:+.3f} nats per byte (± {se:.3f})")
def routing_cost() -> dict[str, object]:
    r = _arms()["routing"]
    assert r.delta_nll > r.nll_se > 0  # a cost, measured at the output, beyond its noise
    return {"dnll": r.delta_nll, "se": r.nll_se}


@claim(LESSON, "the top expert carries {share:.0%} of the weight")
def top_share() -> dict[str, object]:
    """The top expert's mean share of the mixing weight over the model's recorded routing."""
    t = load_trace(ASSET_DIR / TRACE_FILE)
    w = t.weights.astype(np.float64)  # [N, L, k], rows sum to 1, descending
    assert np.all(w[..., 0] >= w[..., -1])
    share = float(w[..., 0].mean())
    assert 0.5 < share < 1.0
    return {"share": share}


@claim(LESSON, "(J = {J0}) and the cost is {dnll0:.2f} nats per byte")
def top_expert_cost() -> dict[str, object]:
    r0, r1 = _arms(J=0)["routing"], _arms()["routing"]
    assert r0.delta_nll - r1.delta_nll > 3 * (r0.nll_se + r1.nll_se)
    return {"J0": 0, "dnll0": r0.delta_nll}


@claim(LESSON, "{pilot:.0%} of gets hit, at a quality cost of exactly zero")
def prefetch_hits() -> dict[str, object]:
    a = _arms()
    p, s = a["prefetch"], a["stock"]
    assert p.delta_nll == 0.0 and p.nll == s.nll and p.greedy_agree == 1.0 and p.swaps == 0
    assert p.hit_rate > s.hit_rate
    return {"pilot": p.hit_rate}


@claim(LESSON, "reads {more:.0%} more bytes than stock")
def prefetch_bytes() -> dict[str, object]:
    a = _arms()
    p, s = a["prefetch"], a["stock"]
    more = (p.demand_bytes + p.prefetch_bytes) / (s.demand_bytes + s.prefetch_bytes) - 1
    assert more > 0 and p.wasted_bytes > 0
    return {"more": more}


@claim(LESSON, "Both together: {both:.0%}")
def both_hits() -> dict[str, object]:
    a = _arms()
    assert a["both"].hit_rate > max(a["routing"].hit_rate, a["prefetch"].hit_rate)
    return {"both": a["both"].hit_rate}


@claim(LESSON, "ceiling for stock's requests, {belady:.0%}")
def belady() -> dict[str, object]:
    sw = sweep()
    # a replay of the stock pass's own requests, from the same warm cache: LRU's replay is
    # the live run hit for hit, so Belady's is the best any eviction rule could have done
    assert sw.replay["lru"] == sw.stock.hit_resident + sw.stock.hit_prefetched
    assert sw.belady_rate > sw.stock.hit_rate
    assert _arms()["routing"].hit_rate > sw.belady_rate  # routing beats it
    return {"belady": sw.belady_rate}


@claim(LESSON, "move M from {M0} to {M1}")
def hero() -> dict[str, object]:
    h = TAB.hero
    assert h.name == "M" and h.demo == windows(D)[-1] == D.n_experts
    return {"M0": int(h.value), "M1": int(h.demo)}


@claim(LESSON, "teacher-forcing the same {positions} held-out bytes")
def scored_text() -> dict[str, object]:
    sw = sweep()
    positions = sw.stock.positions
    assert positions == sw.text["score_bytes"] - 1  # the first byte predicts nothing
    assert all(r.positions == positions for r in (*sw.routing.values(), *sw.both.values()))
    return {"positions": positions}


@claim(LESSON, "(stock decoding of {warm} bytes just before)")
def warm_text() -> dict[str, object]:
    return {"warm": sweep().text["warmup_bytes"]}


@claim(LESSON, "cache_prior reads λ = (M − {k}) / {span} from it")
def lam_mapping() -> dict[str, object]:
    k, E = D.top_k, D.n_experts
    assert _setting(method="cache_prior", M=k).stock  # the left end is stock
    assert _setting(method="cache_prior", M=E).lam == 1.0  # the right end fully cache-driven
    return {"k": k, "span": E - k}


@claim(LESSON, "each swapped slot costs about {kl:.0f} nats")
def kl_per_slot() -> dict[str, object]:
    """Least squares through the origin of colibri's KL against the swap rate, per slot."""
    sw = sweep()
    pts = [*sw.routing.values(), sweep().stock]
    swap = np.array([r.swap_rate for r in pts])
    kl = np.array([r.kl_colibri for r in pts])
    per_slot = float(kl @ swap / (swap @ swap)) / D.top_k
    resid = kl - per_slot * D.top_k * swap
    assert np.abs(resid).max() < 0.2 * kl.max()  # a rescaled swap count, nearly a line
    # why: a dropped expert of stock weight p adds p ln(p / 1e-12), about p x 27.6 nats,
    # whatever replaced it, so KL is about ln(1e12) x the dropped stock mass
    for r in sw.routing.values():
        assert abs(r.kl_colibri - np.log(1e12) * r.dropped_mass) < 0.1 * r.kl_colibri
    return {"kl": per_slot}


@claim(LESSON, "a token uses {per_token} experts in all")
def token_set() -> dict[str, object]:
    per_token = D.n_layers * D.top_k
    assert per_token <= min(capacities(D))
    for c in capacities(D):
        assert sweep(c).prefetch["previous"].prefetch_reads == 0  # nothing to load
    return {"per_token": per_token}


@claim(LESSON, "PILOT is weakest for layer {layer} ({recall:.0%} recall)")
def pilot_first_layer() -> dict[str, object]:
    rows = sweep().prefetch["pilot"].layer_prefetch  # PrefetchMeters fields per layer
    recall = [r[3] / r[2] if r[2] else None for r in rows]  # correct / used
    got = [(r, i) for i, r in enumerate(recall) if r is not None]
    worst, layer = min(got)
    assert layer == 1 == min(i for _, i in got)  # the first predicted layer
    return {"layer": layer, "recall": worst}
