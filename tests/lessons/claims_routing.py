"""Claims of assets/lessons/routing.md, computed from the shipped sweep
(core.experiments.routing_sweep) and core.routing itself, each checked by its reason.

The sweep is the engine's own closed-loop run (tests/core/experiments/test_routing_sweep.py
recomputes a sample of it exactly); claims read it, so each stays fast. The tab's defaults name
the setting.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from core.experiments.routing import ASSUMED_STEP_S, modelled_speed
from core.experiments.routing_grid import capacities, tab_route, windows
from core.experiments.routing_pilot import pilot_alignment
from core.experiments.routing_sweep import SEED, CapacitySweep, load
from core.model.manifest import ASSET_DIR, dims_of, read_manifest
from core.model.trace import TRACE_FILE
from core.model.trace import load as load_trace
from core.routing import RouteConfig
from core.routing.disk import DISKS, Disk
from core.routing.meters import COLIBRI_KL_FLOOR
from tabs.routing import TAB
from tests.lessons.registry import Reason, Within, claim, reason

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


@claim(LESSON, "keep the top expert, then prefer a resident one")
def sacred() -> dict[str, object]:
    cfg = _setting()
    assert cfg.method == "max_rank" and cfg.J == 1 and not cfg.stock
    return {}


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


@claim(LESSON, "held-out text costs {dnll:+.3f} nats per byte more (± {se:.3f}; the model needs "
               "{nll:.2f} nats per byte): within two standard errors of no cost.")
def routing_cost() -> dict[str, object]:
    a = _arms()
    r = a["routing"]
    assert 0 < r.delta_nll < 2 * r.nll_se  # measured at the output; not told from zero
    assert abs(r.nll - a["stock"].nll - r.delta_nll) < 1e-12
    return {"dnll": r.delta_nll, "se": r.nll_se, "nll": a["stock"].nll}


def _top_share() -> float:
    """The top expert's mean share of the mixing weight over the model's recorded routing."""
    t = load_trace(ASSET_DIR / TRACE_FILE)
    w = t.weights.astype(np.float64)  # [N, L, k], rows sum to 1, descending
    assert np.all(w[..., 0] >= w[..., -1])
    return float(w[..., 0].mean())


@reason(LESSON, "Cheap, because the top expert carries {share:.0%} of the weight: let routing swap "
               "the top expert too and the cost is {dnll0:.2f}.")
def top_expert_cost() -> Reason:
    """Cause: keeping the top expert (J = 1 -> 0: it can be swapped). Rival: the window M
    (4 .. 16 at J = 1, the substitutes routing may pick): the cost stays within two standard
    errors of the default's."""
    share = _top_share()
    assert 0.5 < share < 1.0
    r0, r1 = _arms(J=0)["routing"], _arms()["routing"]
    M0 = int(TAB.defaults()["M"])
    rival = [_arms(M=M)["routing"].delta_nll for M in windows(D) if M > D.top_k + 1 and M != M0]
    return Reason(fields={"share": share, "dnll0": r0.delta_nll},
                  effect="Δ NLL of routing (nats per byte)", base=r1.delta_nll,
                  cause="keeping the top expert (J = 1 -> 0)", changed=r0.delta_nll,
                  expect="up", at_least=3 * (r0.nll_se + r1.nll_se),
                  rival="the window M (every other width)", rival_effects=rival,
                  within=Within(name="two standard errors", abs=2 * r1.nll_se))


@claim(LESSON, "{pilot:.0%} of gets hit at no cost in quality")
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


@claim(LESSON, "ceiling for stock's requests ({belady:.0%})")
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


@claim(LESSON, "Both, a little: {hit:.0%} of gets hit at {dnll:+.3f} nats per byte, within "
               "two standard errors of zero.")
def wider_window() -> dict[str, object]:
    h = TAB.hero
    r0, r1 = _arms()["routing"], _arms(M=int(h.demo))["routing"]
    assert r1.hit_rate > r0.hit_rate and r1.delta_nll > r0.delta_nll
    assert 0 < r1.delta_nll < 2 * r1.nll_se
    return {"hit": r1.hit_rate, "dnll": r1.delta_nll}


@claim(LESSON, "At J = {J1} the cost is {z1:.1f} of those errors from zero: on this text it cannot "
               "be told from no cost. At J = {J0} it is {z0:.1f} errors away.")
def in_errors() -> dict[str, object]:
    r0, r1 = _arms(J=0)["routing"], _arms()["routing"]
    z0, z1 = r0.delta_nll / r0.nll_se, r1.delta_nll / r1.nll_se
    assert z1 < 2 < z0
    return {"J1": 1, "z1": z1, "J0": 0, "z0": z0}


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


@claim(LESSON, "cache-prior routing reads λ = (M − {k}) / {span} from it: at M = {k} both are "
               "stock, at M = {E} fully cache-driven.")
def lam_mapping() -> dict[str, object]:
    k, E = D.top_k, D.n_experts
    assert _setting(method="cache_prior", M=k).stock  # the left end is stock
    assert _setting(method="max_rank", M=k).stock
    assert _setting(method="cache_prior", M=E).lam == 1.0  # the right end fully cache-driven
    return {"k": k, "span": E - k, "E": E}


def _kl_per_slot(r) -> float:
    """KL (floored at 1e-12) per swapped slot of one setting."""
    return r.kl_colibri / (r.swap_rate * D.top_k)


@reason(LESSON, "floors an unchosen expert's probability at {floor:g} charges a swap about "
               "ln(1e12) = {ln:.1f} nats times the weight of the expert it "
               "dropped, because that expert's term p ln(p / 1e-12) dominates whatever replaced "
               "it: {kl1:.1f} nats a swapped slot at J = {J1}, where only the second expert can "
               "go, and {kl0:.1f} at J = {J0}.")
def kl_per_slot() -> Reason:
    """Cause: the dropped expert's weight (J = 1 -> 0: the top expert can be dropped). Rival:
    what replaced it (α, the substitute's weight, 0.5 .. 1 at J = 1): within 0.2 nats."""
    sw = sweep()
    ln = float(np.log(1e12))
    for r in sw.routing.values():  # KL is about ln(1e12) x the dropped stock mass
        assert abs(r.kl_colibri - ln * r.dropped_mass) < 0.1 * r.kl_colibri
    r1, r0 = _arms()["routing"], _arms(J=0)["routing"]
    alphas = sorted({float(k.split("alpha=")[1]) for k in sw.routing if "alpha=" in k})
    rival = [_kl_per_slot(_arms(alpha=a)["routing"]) for a in alphas]
    assert COLIBRI_KL_FLOOR == 1e-12 and ln == -np.log(COLIBRI_KL_FLOOR)
    return Reason(fields={"floor": COLIBRI_KL_FLOOR, "ln": ln, "kl1": _kl_per_slot(r1), "J1": 1,
                          "kl0": _kl_per_slot(r0), "J0": 0},
                  effect="KL per swapped slot (nats)", base=_kl_per_slot(r1),
                  cause="the dropped expert's weight (J = 1 -> 0)", changed=_kl_per_slot(r0),
                  expect="up", at_least=2.0, rival="α, the substitute's weight (0.5 .. 1)",
                  rival_effects=rival, within=Within(name="0.2 nats", abs=0.2))


@claim(LESSON, "a token uses {per_token} experts in all")
def token_set() -> dict[str, object]:
    per_token = D.n_layers * D.top_k
    assert per_token <= min(capacities(D))
    for c in capacities(D):
        assert sweep(c).prefetch["previous"].prefetch_reads == 0  # nothing to load
    return {"per_token": per_token}


@reason(LESSON, "PILOT is weakest for layer {layer} ({recall:.0%} recall), because the stream it "
               "reads there, after layer {prev}'s attention, points elsewhere than layer "
               "{layer}'s router input (cosine {cos:.2f}, against {later:.2f} or more for later "
               "layers): layer {prev}'s experts rewrite it. Read after layer {prev}'s experts "
               "instead, the same prediction recalls {after:.0%}.")
def pilot_first_layer() -> Reason:
    """The sweep's closed-loop recall per layer, and core.experiments.routing_pilot on the same
    passage teacher-forced. Cause: the stream read (after layer 0's experts instead of its
    attention). Rival: the passage (two other held-out passages): layer 1's recall with
    PILOT's own tap stays within 10 points."""
    rows = sweep().prefetch["pilot"].layer_prefetch  # PrefetchMeters fields per layer
    recall = [r[3] / r[2] if r[2] else None for r in rows]  # correct / used
    got = [(r, i) for i, r in enumerate(recall) if r is not None]
    worst, layer = min(got)
    assert layer == 1 == min(i for _, i in got)  # the first predicted layer
    a = pilot_alignment(SEED)
    i = a.at(layer)
    assert abs(a.recall[i] - worst) < 0.02  # teacher-forced, the closed loop's recall
    later = min(a.cosine[i + 1:])
    assert a.cosine[i] < 0.5 < later
    assert a.after_cosine[i] > later  # after the experts, the stream is the router's
    return Reason(
        fields={"layer": layer, "recall": worst, "prev": layer - 1, "cos": a.cosine[i],
                "later": later, "after": a.after_recall[i]},
        effect=f"PILOT's recall for layer {layer} (teacher-forced)", base=a.recall[i],
        cause=f"the stream read (after layer {layer - 1}'s experts, not its attention)",
        changed=a.after_recall[i], expect="up", at_least=0.5,
        rival="the passage (held-out seeds 1, 2)",
        rival_effects=[pilot_alignment(s).recall[i] for s in (SEED + 1, SEED + 2)],
        within=Within(name="10 points", abs=0.10))


# ---- Going further: what a prefetch is worth in time -------------------------------------------
def _speed(arm: str, dk: str | Disk) -> float:
    return modelled_speed(_arms()[arm], dk)


def _ratio(dk: Disk) -> float:
    """Prefetch's modelled tokens/s over stock's on disk dk."""
    return _speed("prefetch", dk) / _speed("stock", dk)


@claim(LESSON, "an assumed {step:.0f} ms of compute per token, {layer:.2f} ms a layer")
def assumed_compute() -> dict[str, object]:
    return {"step": ASSUMED_STEP_S * 1e3, "layer": ASSUMED_STEP_S * 1e3 / D.n_layers}


@claim(LESSON, "On NVMe, prefetch lifts stock's {s:.0f} tokens/s to {p:.0f}")
def nvme_speed() -> dict[str, object]:
    s, p = _speed("stock", "NVMe"), _speed("prefetch", "NVMe")
    assert p > s
    return {"s": s, "p": p}


@reason(LESSON, "On a hard disk it cuts {s:.1f} to {p:.1f}, because each read pays an {seek:.0f} "
               "ms seek, longer than the layer it hides behind, and prefetch makes more reads: "
               "{pr:.1f} a token against stock's {sr:.1f}. Cut the seek to {seek2:g} ms and "
               "prefetch pays again ({r2:.2f} of stock's speed); give the disk {bw:.0f} times "
               "the bandwidth and the loss stays ({rbw:.2f})")
def hdd_speed() -> Reason:
    """Effect: prefetch's tokens/s over stock's on the HDD preset. Cause: the seek (8 ms ->
    0.5 ms, under the 0.75 ms layer). Rival: the bytes (bandwidth x 0.5, 2, 10, seek held):
    the ratio stays within 0.02."""
    a, hdd = _arms(), DISKS["HDD"]
    layer = ASSUMED_STEP_S / D.n_layers
    assert hdd.per_read > layer  # a read outlasts the layer it overlaps
    p, st = a["prefetch"], a["stock"]
    reads = (p.demand_reads + p.prefetch_reads) / p.positions, st.demand_reads / st.positions
    assert reads[0] > reads[1]
    seek2 = 0.5e-3
    assert seek2 < layer
    faster = [replace(hdd, bandwidth=hdd.bandwidth * f) for f in (0.5, 2.0, 10.0)]
    return Reason(
        fields={"s": _speed("stock", "HDD"), "p": _speed("prefetch", "HDD"),
                "seek": hdd.per_read * 1e3, "pr": reads[0], "sr": reads[1],
                "seek2": seek2 * 1e3, "r2": _ratio(replace(hdd, per_read=seek2)), "bw": 10,
                "rbw": _ratio(faster[-1])},
        effect="prefetch's modelled tokens/s over stock's on the HDD preset", base=_ratio(hdd),
        cause="the seek per read (8 ms -> 0.5 ms, under one layer's compute)",
        changed=_ratio(replace(hdd, per_read=seek2)), expect="up", at_least=0.1,
        rival="the bandwidth (x 0.5, 2, 10; the seek held)",
        rival_effects=[_ratio(dk) for dk in faster], within=Within(name="0.02", abs=0.02))
