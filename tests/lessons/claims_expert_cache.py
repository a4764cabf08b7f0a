"""Claims of the Expert cache lesson (assets/lessons/expert_cache.md).

Every number comes from a scripted run of the real ExpertCache at the tab's defaults
(core.experts.scenarios) or from a cache built here over the scenarios' shared fixture; each
"because" is checked from the counters' definitions (a prefetched hit is the first get of an
expert loaded ahead; every other hit is resident).
"""

from __future__ import annotations

import functools

import pytest

from core.errors import ParamError
from core.experts import MAX_BATCH, BudgetTooSmall, ExpertCache, ShardIndex, SlotsExhausted
from core.experts.reader import PAGE, round_up
from core.experts.scenarios import (
    EXPERT_BYTES,
    N_EXPERTS,
    STRIDE,
    ScenarioRun,
    fixture_dir,
    run_scenario,
)
from core.experts.stats import CacheStats
from tabs.expert_cache import TAB
from tests.lessons.registry import Reason, Within, claim, reason

LESSON = "expert_cache"


def _default(name: str) -> object:
    return TAB.control(name).value


@functools.cache
def _run(scenario: str, slots: int | None = None) -> ScenarioRun:
    d = TAB.defaults()
    return run_scenario(scenario, int(d["slots"] if slots is None else slots), int(d["topk"]),
                        int(d["schedule"]), int(d["seed"]))


def _error(s: CacheStats) -> int:
    """The subtraction's error in one window: max(hits - prefetch reads, 0), the aggregate the
    figures draw, minus the exact resident hits (0 for a window without gets)."""
    return max(s.hits - s.prefetch_reads, 0) - s.hits_resident if s.requests else 0


def _run_error(run: ScenarioRun) -> int:
    """Resident hits the subtraction gets wrong over a run, window by window."""
    return sum(abs(_error(w.stats)) for w in run.windows)


def _cache(topk: int, slots: int, compat: str | None = None) -> ExpertCache:
    return ExpertCache(ShardIndex.open(fixture_dir()), 1, N_EXPERTS, topk, slots * STRIDE,
                       compat=compat)


@claim(LESSON, "a few fixed **slots** ({stride:,} B each here)")
def slot_size() -> dict[str, object]:
    """The payload plus a page of alignment slack each side, rounded to a whole page."""
    run = _run("prefetch then consume")
    assert run.slot_bytes == STRIDE == round_up(EXPERT_BYTES + 2 * PAGE, PAGE)
    assert STRIDE % PAGE == 0 and STRIDE - EXPERT_BYTES >= 2 * PAGE - 1
    return {"stride": run.slot_bytes}


@claim(LESSON, "Runs use the real cache on a {n}-expert shard")
def shard_size() -> dict[str, object]:
    index = ShardIndex.open(fixture_dir())
    names = [t.name for h in index.headers for t in h.tensors]
    w1 = [n for n in names if n.endswith(".w1.weight_packed")]
    assert len(w1) == N_EXPERTS and len(names) == 6 * N_EXPERTS  # six tensors per expert
    return {"n": len(w1)}


@claim(LESSON, "look at the first window of \"{scenario}\":** {k} cold experts are "
               "batch-loaded, then the first one is got {n} times. How many gets hit, and how many "
               "are reuse? <details><summary>Answer</summary> All {gets} gets hit, and {res} are "
               "reuse: only the first get used the batch's load. The subtraction finds {agg} "
               "reuse.")
def default_probe() -> dict[str, object]:
    """The Predict question is about the tab's default scenario, whose first window is the
    probe: one batch, then k gets of its first expert."""
    scenario = str(_default("scenario"))
    run = _run(scenario)
    k, w0 = run.topk, run.windows[0]
    steps = run.steps[w0.first: w0.last + 1]
    assert [st.kind for st in steps] == ["prefetch", "consume"]
    s = w0.stats
    assert s.prefetch_reads == k and s.demand_requests == k == s.hits
    assert s.hits_prefetched == 1  # only the first get of expert 0 consumes its prefetch
    assert s.hits_resident == k - 1 and s.prefetch_pending == k - 1
    assert s.upstream_resident_hits == max(s.hits - s.prefetch_reads, 0)
    return {"scenario": scenario, "k": k, "n": s.demand_requests, "gets": s.hits,
            "res": s.hits_resident, "agg": s.upstream_resident_hits}


@claim(LESSON, "Over the run the subtraction is wrong in {wrong} of {windows} windows: "
               "{agg:.0f}% reuse against {exact:.0f}% exact.")
def default_totals() -> dict[str, object]:
    """The tab opens where the naive count is wrong: most windows, and the whole run."""
    stats = [w.stats for w in _run(str(_default("scenario"))).windows]
    with_gets = [x for x in stats if x.requests > 0]
    wrong = sum(_error(x) != 0 for x in with_gets)
    agg = 100 * sum(max(x.hits - x.prefetch_reads, 0) for x in stats) / sum(x.requests
                                                                           for x in stats)
    exact = 100 * sum(x.hits_resident for x in stats) / sum(x.demand_requests for x in stats)
    assert 2 * wrong > len(with_gets) and round(agg) != round(exact)
    return {"wrong": wrong, "windows": len(with_gets), "agg": agg, "exact": exact}


@claim(LESSON, "**prefetch then consume**: right in every window.")
def prefetch_then_consume_right() -> dict[str, object]:
    run = _run("prefetch then consume")
    assert _run_error(run) == 0
    assert all(w.stats.prefetch_wasted == 0 for w in run.windows)
    return {}


@claim(LESSON, "The token slider steps through the run.")
def token_slider() -> dict[str, object]:
    """The slider exists, its range follows the schedule, and the default shows every step."""
    c = TAB.control("token")
    assert c.max_from == "schedule" and c.value == _default("schedule")
    assert {f.name for f in TAB.figures if "token" in f.params} == {"cache_slot_map",
                                                                   "cache_counters"}
    return {}


@claim(LESSON, "**The probe of \"prefetch then consume\".** {k} cold experts are batch-loaded, "
               "then each is got twice: all {gets} gets hit, but only the second pass, {res} gets, "
               "is reuse.")
def probe_window() -> dict[str, object]:
    run = _run("prefetch then consume")
    k = run.topk
    w0 = run.windows[0]
    steps = run.steps[w0.first: w0.last + 1]
    assert [st.kind for st in steps] == ["prefetch", "consume", "consume"]
    first, second = steps[1].stats, steps[2].stats
    assert (first.hits_prefetched, first.hits_resident, first.demand_requests) == (k, 0, k)
    assert second.hits_resident - first.hits_resident == k  # the second pass: all reuse
    s = w0.stats
    assert s.hits == s.demand_requests == 2 * k and s.prefetch_reads == k
    assert s.hits_prefetched == k
    return {"k": k, "gets": s.hits, "res": s.hits_resident}


@claim(LESSON, "loads counted in one window, used in the next, look like reuse")
def reset_window() -> dict[str, object]:
    run = _run("reset window")
    w0, w1 = run.windows[:2]
    assert w0.stats.prefetch_reads > 0 and w0.stats.demand_requests == 0
    s = run.steps[w1.first].stats  # the probe consumed in the next window
    assert s.hits_resident == 0 and s.aggregate_adjusted_hits == s.hits_prefetched > 0
    return {}


@claim(LESSON, "a miss evicts an unused expert loaded ahead (**waste**)")
def pressure_waste() -> dict[str, object]:
    run = _run("pressure")
    wasted = sum(w.stats.prefetch_wasted for w in run.windows)
    marked = sum(w for st in run.steps for *_, w in st.evicted)
    assert wasted > 0 and wasted == marked
    return {}


@claim(LESSON, "reads that cannot complete publish nothing and claim no bytes")
def truncated() -> dict[str, object]:
    run = _run("truncated shard")
    assert sum(w.failed for w in run.windows) > 0
    # bytes read are exactly the payload of the loads that published: a failed read claims 0 B
    assert all(w.stats.bytes_read == w.published * EXPERT_BYTES for w in run.windows)
    assert sum(st.published for st in run.steps) == sum(w.published for w in run.windows)
    assert all(c.state != "INFLIGHT" for st in run.steps for c in st.slots)
    return {}


@claim(LESSON, "**Move the slots slider:** fewer slots, more evictions.")
def slots_slider() -> dict[str, object]:
    hero = TAB.hero
    assert hero.name == "slots"
    lo, hi = int(hero.minimum), int(hero.maximum)
    ev = [sum(w.stats.evictions for w in _run(str(_default("scenario")), s).windows)
          for s in (lo, int(hero.value), hi)]
    assert ev[0] > ev[1] > ev[2]
    return {}


@reason(LESSON, "Raw {raw:.0%}, exact resident {res:.0%}: the aggregate happens to be right here, "
                "because each prefetch is consumed exactly once, in its own window.")
def probe_rates() -> Reason:
    """Effect: resident hits the subtraction gets wrong over the "prefetch then consume" run.
    Cause: each prefetch consumed once, in its window (-> "consume one only": one consumed
    many times, the rest never; -> "reset window": consumed in the next window): at least one
    wrong. Rival: the slots (the slider's ends) and the routing seed (1, 2), the script held:
    none wrong."""
    run = _run("prefetch then consume")
    s = run.windows[0].stats
    assert _error(s) == 0 and s.hits_resident == s.hits - s.prefetch_reads
    d = TAB.defaults()
    slots = [int(TAB.hero.minimum), int(TAB.hero.maximum)]
    rival = [_run_error(_run("prefetch then consume", n)) for n in slots]
    rival += [_run_error(run_scenario("prefetch then consume", int(d["slots"]), int(d["topk"]),
                                      int(d["schedule"]), seed)) for seed in (1, 2)]
    return Reason(fields={"raw": s.hits / s.requests, "res": s.hits_resident / s.demand_requests},
                  effect="resident hits the subtraction gets wrong over the run",
                  base=_run_error(run),
                  cause="each prefetch consumed once, in its window (-> consume one only, "
                        "reset window)",
                  changed=[_run_error(_run(n)) for n in ("consume one only", "reset window")],
                  expect="up", at_least=1, rival="the slots (5, 16), the routing seed (1, 2)",
                  rival_effects=rival, within=Within(name="none wrong", abs=0))


@claim(LESSON, "After the reset the same {k} gets are {res} resident hits with no bytes read")
def probe_after_reset() -> dict[str, object]:
    run = _run("prefetch then consume")
    st = run.steps[run.windows[1].first]
    s = st.stats
    assert st.kind == "consume" and s.bytes_read == 0 and s.prefetch_reads == 0
    assert s.hits_resident == s.demand_requests
    return {"k": s.demand_requests, "res": s.hits_resident}


@claim(LESSON, "A common mistake is a cache that holds nothing: a view is then safe only until a "
               "later load takes its slot.")
def holds_nothing() -> dict[str, object]:
    """The cache in its mode that holds nothing: a view's slot is taken by the next load; the
    cache as taught: the load is refused (counted as a drop) until the next layer begins."""
    k = 2
    with _cache(k, k + 1, compat="k3-v1") as c:
        views = [c.get(0, e) for e in range(k + 2)]  # no new layer: slot 0 is taken
        assert not views[0].valid() and c.stats().leased == 0
    with _cache(k, k + 1) as c:
        views = [c.get(0, e) for e in range(k + 1)]
        with pytest.raises(SlotsExhausted):
            c.get(0, k + 1)
        assert all(v.valid() for v in views)  # the refused miss changed nothing
        c.begin_layer()
        c.get(0, k + 1)  # the next layer: the load lands
    return {}


@claim(LESSON, "The cache refuses a budget under top-k + {one} slots and keeps top-k + {one} "
               "slots unpinned: with every other slot pinned and a layer's top-k views in use, "
               "one more load can still land, and the next is refused.")
def floor() -> dict[str, object]:
    k, slots = 2, 6
    with pytest.raises(BudgetTooSmall):
        _cache(k, k)
    with _cache(k, slots) as c:
        for e in range(slots):
            c.get(0, e)
        c.begin_layer()
        pinned = 0
        for e in range(slots):
            try:
                c.pin(0, e, True)
                pinned += 1
            except ParamError:
                break
        assert slots - pinned == k + 1
        c.begin_layer()
        cold = iter(range(slots, N_EXPERTS))
        views = [c.get(0, next(cold)) for _ in range(k)]  # a layer's top-k views, in use
        extra = c.get(0, next(cold))  # one more load lands
        assert all(v.valid() for v in views) and extra.valid()
        with pytest.raises(SlotsExhausted):
            c.get(0, next(cold))
    return {"one": 1}


@claim(LESSON, "The cache refuses a batch that holds an out-of-range id or more than {n} ids. "
               "Skipping them silently, a common shortcut, hides the caller's bug.")
def batch_cap() -> dict[str, object]:
    """The cache refuses a batch of more than MAX_BATCH ids or with an out-of-range id; the
    cache in its skipping mode returns without a word, counting what it dropped."""
    with _cache(4, 8) as c, pytest.raises(ParamError):
        c.get_many(0, [0] * (MAX_BATCH + 1))
    with _cache(4, 8) as c, pytest.raises(ParamError):
        c.get_many(0, [0, N_EXPERTS])
    with _cache(4, 8, compat="k3-v1") as c:
        c.get_many(0, [0, 1, N_EXPERTS, N_EXPERTS + 1])
        assert c.stats().batch_ids_dropped == 2
    return {"n": MAX_BATCH}


@claim(LESSON, "A batch that finds no slot it may evict leaves its other experts unread, and "
               "counts them.")
def batch_skips() -> dict[str, object]:
    run = _run("pressure", int(TAB.hero.minimum))
    skipped = [(st, e) for st in run.steps for e in st.skipped]
    assert skipped and len(skipped) == sum(w.stats.prefetch_skipped for w in run.windows)
    for st, e in skipped:  # unread: not in a slot after its batch
        assert st.kind == "prefetch" and all(cell.expert != e for cell in st.slots)
    return {}


@claim(LESSON, "the subtracted aggregate max(hits − prefetch reads, {zero}) / requests")
def subtracted_aggregate() -> dict[str, object]:
    """The aggregate the figures draw is the subtraction, clamped; the clamp hides negatives."""
    stats = [w.stats for name in ("consume one only", "reset window", "pressure")
             for w in _run(name).windows]
    assert all(s.upstream_resident_hits == max(s.hits - s.prefetch_reads, 0) for s in stats)
    assert any(s.hits - s.prefetch_reads < 0 for s in stats)
    return {"zero": 0}
