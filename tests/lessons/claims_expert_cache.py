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
    run_totals,
)
from tabs.expert_cache import TAB
from tests.lessons.registry import claim

LESSON = "expert_cache"


def _default(name: str) -> object:
    return TAB.control(name).value


@functools.cache
def _run(scenario: str, slots: int | None = None) -> ScenarioRun:
    d = TAB.defaults()
    return run_scenario(scenario, int(d["slots"] if slots is None else slots), int(d["topk"]),
                        int(d["schedule"]), int(d["seed"]))


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
    t = run_totals(_run(str(_default("scenario"))))
    assert 2 * t.wrong_windows > t.windows_with_gets
    assert round(t.rates.aggregate) != round(t.rates.exact_resident)
    return {"wrong": t.wrong_windows, "windows": t.windows_with_gets,
            "agg": t.rates.aggregate, "exact": t.rates.exact_resident}


@claim(LESSON, "**prefetch then consume**: right in every window.")
def prefetch_then_consume_right() -> dict[str, object]:
    run = _run("prefetch then consume")
    assert not any(w.aggregate_wrong for w in run.windows)
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
    assert all(w.claims_only_published for w in run.windows)
    assert all(c.state != "INFLIGHT" for st in run.steps for c in st.slots)
    return {}


@claim(LESSON, "**Move the hero (slots):** fewer slots, more evictions.")
def hero_slots() -> dict[str, object]:
    hero = TAB.hero
    assert hero.name == "slots"
    lo, hi = int(hero.minimum), int(hero.maximum)
    ev = [sum(w.stats.evictions for w in _run(str(_default("scenario")), s).windows)
          for s in (lo, int(hero.value), hi)]
    assert ev[0] > ev[1] > ev[2]
    return {}


@claim(LESSON, "Raw {raw:.0%}, exact resident {res:.0%}: the aggregate happens to be right here")
def probe_rates() -> dict[str, object]:
    run = _run("prefetch then consume")
    s = run.windows[0].stats
    assert not any(w.aggregate_wrong for w in run.windows)
    assert s.upstream_resident_hits == s.hits_resident
    return {"raw": s.hit_rate_raw, "res": s.exact_resident_rate}


@claim(LESSON, "After the reset the same {k} gets are {res} resident hits with no bytes read")
def probe_after_reset() -> dict[str, object]:
    run = _run("prefetch then consume")
    st = run.steps[run.windows[1].first]
    s = st.stats
    assert st.kind == "consume" and s.bytes_read == 0 and s.prefetch_reads == 0
    assert s.hits_resident == s.demand_requests
    return {"k": s.demand_requests, "res": s.hits_resident}


@claim(LESSON, "Compat mode (`{mode}`) leases nothing")
def compat_leases_nothing() -> dict[str, object]:
    """Compat: a view's slot can be taken by the next load; fixed: the load is refused."""
    mode, k = "k3-v1", 2
    with _cache(k, k + 1, compat=mode) as c:
        views = [c.get(0, e) for e in range(k + 2)]  # no begin_layer: compat takes slot 0
        assert not views[0].valid() and c.stats().leased == 0
    with _cache(k, k + 1) as c:
        for e in range(k + 1):
            c.get(0, e)
        with pytest.raises(SlotsExhausted):
            c.get(0, k + 1)
    return {"mode": mode}


@claim(LESSON, "The cache refuses a budget under top-k + {one} slots (BudgetTooSmall) and keeps "
               "top-k + {one} slots unpinned")
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
    return {"one": 1}


@claim(LESSON, "stops after {n} reservations")
def batch_cap() -> dict[str, object]:
    """Fixed mode refuses a batch of more than MAX_BATCH ids; compat skips out-of-range ids."""
    with _cache(4, 8) as c, pytest.raises(ParamError):
        c.get_many(0, [0] * (MAX_BATCH + 1))
    with _cache(4, 8, compat="k3-v1") as c:
        c.get_many(0, [0, 1, N_EXPERTS, N_EXPERTS + 1])
        assert c.stats().batch_ids_dropped == 2
    return {"n": MAX_BATCH}


@claim(LESSON, "the naive aggregate max(hits − prefetch reads, {zero}) / requests")
def naive_aggregate() -> dict[str, object]:
    """The aggregate the figures draw is the subtraction, clamped; the clamp hides negatives."""
    stats = [w.stats for name in ("consume one only", "reset window", "pressure")
             for w in _run(name).windows]
    assert all(s.upstream_resident_hits == max(s.hits - s.prefetch_reads, 0) for s in stats)
    assert any(s.hits - s.prefetch_reads < 0 for s in stats)
    return {"zero": 0}
