"""Scenario presets: scripted runs of the real cache keep their books and reproduce the probes.

Pins: every window and step satisfies the accounting invariants; bytes_read never claims a load
that did not publish; nothing is left INFLIGHT; the seed's probe numbers (reference section 10)
come out of the presets' opening steps; runs are deterministic per seed; bad knobs raise
ParamError naming them; the truncated-shard preset never touches the shared fixture.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from collections import Counter
from pathlib import Path

import pytest

from core.errors import ParamError
from core.experts import CacheStats, invariant_errors
from core.experts.fixture_store import intact as _intact
from core.experts.scenarios import (
    SCENARIOS,
    ScenarioRun,
    Step,
    clear_cache,
    fixture_dir,
    run_scenario,
)

from .conftest import EXPERT_BYTES

KNOBS = [(8, 4, 12, 0), (5, 4, 6, 3), (6, 2, 16, 7), (16, 8, 24, 1), (9, 1, 10, 42)]


def _exact(st: Step | CacheStats) -> tuple[int, int, int]:
    s = st.stats if isinstance(st, Step) else st
    return s.hits_prefetched, s.hits_resident, s.prefetch_pending


def _digest(d: Path) -> str:
    return hashlib.sha256(b"".join(f.read_bytes() for f in sorted(d.glob("*.safetensors"))))\
        .hexdigest()


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("knobs", KNOBS, ids=lambda k: "s{}-k{}-T{}-seed{}".format(*k))
def test_books_balance_in_every_window_and_step(scenario: str, knobs) -> None:
    """Invariants, honest bytes, no INFLIGHT leftovers, windows tile the steps."""
    slots, topk, schedule, seed = knobs
    run = run_scenario(scenario, slots, topk, schedule, seed)
    for st in run.steps:
        assert invariant_errors(st.stats) == [], (st.index, st.call)
        assert all(c.state != "INFLIGHT" for c in st.slots)
        assert len(st.slots) == slots
        assert st.stats.drops == 0  # fixed mode: leases + the pin limit leave a victim
    assert [w.first for w in run.windows] == [0] + [w.last + 1 for w in run.windows[:-1]]
    assert run.windows[-1].last == len(run.steps) - 1
    for w in run.windows:
        s = w.stats
        assert invariant_errors(s) == []
        assert s.bytes_read == w.published * EXPERT_BYTES
        assert s.failed_reads == w.failed
        assert s.window == w.index
        assert s.requests == s.demand_requests  # fixed mode: warm() is not a request


# Hand-worked upstream aggregate errors, (hits - prefetch_reads) - hits_resident per window.
# Fixed mode counts no warm as a hit, so hits = hits_resident + hits_prefetched and the error
# is hits_prefetched - prefetch_reads: prefetches consumed in the window minus batch reads
# issued in it. Knobs (8 slots, top-4, 4 tokens, seed 0) route, pinned below:
#   T1 (2, 13, 3, 4)   T2 (3, 2, 4, 19)   T3 (3, 2, 1, 18)   T4 (3, 2, 18, 12)
# A token window is: reset, begin_layer, get_many(ids), gets.
#
# prefetch then consume: W0 batch 0..3 (4 reads), 4 prefetched hits, 4 resident: 4 - 4 = 0.
#   W1 the probe's 4 gets, all resident: 0. T1..T4: every id a batch reads is got in the same
#   window and nothing prefetched survives unconsumed, so each is 0.           [0] * 6
# consume one only: W0 reads 0..3, gets 0 four times: 1 prefetched hit - 4 reads = -3;
#   1, 2, 3 stay pending. T1 reads 13, 4 (2, 3 resident); gets 2 x4: 2 was pending,
#   1 - 2 = -1. T2 reads 19; gets 3 x4, 3 was pending: 1 - 1 = 0. T3 reads 18; 3 already
#   consumed: 0 - 1 = -1. T4 reads 12 (evicting 0, the least recently used): 0 - 1 = -1.
# reset window: the batch of token t is issued in the window of token t - 1's gets.
#   W0 reads 0..3, no gets: -4. W1 gets 0..3 (4 prefetched), batch T1 reads 13, 4: 4 - 2 = 2.
#   W2 gets T1 (13, 4 prefetched), batch T2 reads 19: 2 - 1 = 1. W3 gets T2 (19), batch T3
#   reads 18: 0. W4 gets T3 (18), batch T4 reads 12 into the LRU unleased slot (expert 0): 0.
#   W5 gets T4 (12 prefetched), no batch: 1. (The errors sum to 0: 9 reads, 9 consumed.)
# truncated shard: W0 get(0) misses, batch 20..23 reads nothing (unreadable), get(23) fails:
#   0 - 0 = 0. Every routed id is < 20, so T1..T4 are "prefetch then consume" tokens: 0 each.
# pressure: the hottest expert (2 and 3 are routed 4 times each; argmax takes 2) is warmed and
#   pinned in W0: a warm read is not a prefetch_read and nothing is got: 0. One chunk of all 4
#   tokens asks for 8 distinct ids: the sorted batch [1, 2, 3, 4, 12, 13, 18, 19] reads the 7
#   not resident into the 7 free slots. The gets in router order, 2 13 3 4 | 19 1 18 12, are
#   8 prefetched hits (2's first get consumes the warm): 8 - 7 = +1.
#   At 6 slots instead: 2 pinned, 5 free, so 1 3 4 12 13 are read and 18, 19 skipped. Gets
#   2 13 3 4 are 4 prefetched hits; 19, 1, 18, 12 miss (evicting 1 and 12 unconsumed, then
#   13 and 3): 4 - 5 = -1. That window's hits - prefetch_reads is -1: the clamp hides it.
# The aggregate is wrong in a window that has gets and a non-zero error: W0 of "reset window"
# (error -4) and of "pressure" have no gets, so nothing there is misreported.
ROUTE_8404 = ((2, 13, 3, 4), (3, 2, 4, 19), (3, 2, 1, 18), (3, 2, 18, 12))
AGGREGATE_ERRORS = [  # (scenario, knobs, error per window, wrong windows, clamped windows)
    ("prefetch then consume", (8, 4, 4, 0), [0, 0, 0, 0, 0, 0], [], []),
    ("consume one only", (8, 4, 4, 0), [-3, -1, 0, -1, -1], [0, 1, 3, 4], []),
    ("reset window", (8, 4, 4, 0), [-4, 2, 1, 0, 0, 1], [1, 2, 5], [0]),
    ("truncated shard", (8, 4, 4, 0), [0, 0, 0, 0, 0], [], []),
    ("pressure", (8, 4, 4, 0), [0, 1], [1], []),
    ("pressure", (6, 4, 4, 0), [0, -1], [1], [1]),
]


@pytest.mark.parametrize(("scenario", "knobs", "errors", "wrong", "clamped"), AGGREGATE_ERRORS,
                         ids=[f"{a}-{k[0]}slots" for a, k, *_ in AGGREGATE_ERRORS])
def test_aggregate_errors_match_the_hand_worked_schedule(scenario: str, knobs, errors, wrong,
                                                         clamped) -> None:
    run = run_scenario(scenario, *knobs)
    assert run.route == ROUTE_8404  # the derivation above assumes this routing
    assert [w.aggregate_error for w in run.windows] == errors
    assert [w.index for w in run.windows if w.aggregate_wrong] == wrong
    assert [w.index for w in run.windows if w.stats.aggregate_clamped] == clamped


def test_prefetch_then_consume_reproduces_the_seed_table() -> None:
    """0 / 4 / 6,528 -> 4 hits, adjusted 0 -> 8 hits, adjusted 4 -> reset: 4 hits, 0 B."""
    run = run_scenario("prefetch then consume", 8, 4, 4, 0)
    cold, once, again, reset = run.steps[:4]
    s = cold.stats
    assert (s.requests, s.prefetch_reads, s.bytes_read) == (0, 4, 6_528)
    assert s.device_bytes == 20_480
    assert len({i for i, c in enumerate(cold.slots) if c.state == "READY"}) == 4
    assert _exact(cold) == (0, 0, 4)
    s = once.stats
    assert (s.hits, s.requests, s.aggregate_adjusted_hits) == (4, 4, 0)
    assert _exact(once) == (4, 0, 0)
    s = again.stats
    assert (s.hits, s.requests, s.aggregate_adjusted_hits, s.bytes_read) == \
        (8, 8, 4, 6_528)
    assert _exact(again) == (4, 4, 0)
    assert reset.window == 1 and run.windows[0].last == 2
    s = reset.stats
    assert (s.hits, s.prefetch_reads, s.bytes_read) == (4, 0, 0)
    assert _exact(reset) == (0, 4, 0) and s.carried_pending == 0
    assert not any(w.aggregate_wrong for w in run.windows)  # the aggregate's assumptions hold


def test_consume_one_only_is_where_the_aggregate_fails() -> None:
    """hits 4, prefetch 4: the aggregate says 0 resident; truly 1 prefetched + 3 resident."""
    run = run_scenario("consume one only", 8, 4, 4, 0)
    w0 = run.windows[0]
    s = w0.stats
    assert (s.hits, s.prefetch_reads, s.bytes_read) == (4, 4, 6_528)
    assert s.aggregate_adjusted_hits == 0 and s.true_resident_rate == 0.0
    assert _exact(s) == (1, 3, 3) and s.exact_resident_rate == 0.75
    assert w0.aggregate_wrong and w0.aggregate_error == -3


def test_reset_window_carries_prefetches_across_the_boundary() -> None:
    """Batch, reset, consume: the aggregate calls 4 prefetched hits resident."""
    run = run_scenario("reset window", 8, 4, 4, 0)
    w0, w1 = run.windows[:2]
    assert (w0.requests, w0.stats.prefetch_reads, w0.stats.prefetch_pending) == (0, 4, 4)
    s = run.steps[w1.first].stats  # the probe's consumption, before the next batch
    assert (s.hits, s.prefetch_reads, s.aggregate_adjusted_hits) == (4, 0, 4)
    assert _exact(s) == (4, 0, 0)
    assert (s.carried_pending, s.prefetch_consumed_cross_window) == (4, 4)
    assert [w.index for w in run.windows if w.aggregate_wrong] == [1, 2, 5]  # hand-worked above


def test_truncated_shard_publishes_nothing_and_claims_no_bytes() -> None:
    """get(0); cut at expert 20; batch 20..23 publishes 0; get(23) fails; expert 0 survives."""
    before = _digest(fixture_dir())
    run = run_scenario("truncated shard", 8, 4, 6, 0)
    got0, batch, get23 = run.steps[:3]
    assert not got0.cut_before and batch.cut_before
    assert batch.failed == (20, 21, 22, 23) and batch.call.startswith("get_many") \
        and ": 0 published" in batch.call
    assert get23.failed == (23,)
    resident = {c.expert for c in get23.slots if c.state == "READY"}
    assert resident == {0}
    w0 = run.windows[0]
    s = w0.stats
    assert (s.misses, s.hits, s.prefetch_reads, s.evictions) == (2, 0, 0, 0)
    assert (s.bytes_read, s.device_bytes, s.failed_reads) == (1_632, 4_096, 5)
    assert w0.published == 1
    failed_later = {e for st in run.steps[3:] for e in st.failed}
    assert failed_later <= {20, 21, 22, 23}
    assert _digest(fixture_dir()) == before and _intact(fixture_dir())


def test_pressure_wastes_prefetches_and_keeps_the_pin() -> None:
    """More ids than slots: the batch skips its tail, misses evict unused prefetches."""
    run = run_scenario("pressure", 6, 4, 12, 0)
    assert run.steps[0].kind == "warm"
    routed = Counter(e for token in run.route for e in token)
    hot = min(routed, key=lambda e: (-routed[e], e))  # most routed, lowest id on a tie
    for st in run.steps:
        assert [c.expert for c in st.slots if c.pinned] == [hot]
    totals = {k: sum(getattr(w.stats, k) for w in run.windows)
              for k in ("prefetch_wasted", "prefetch_skipped", "warm_reads", "demand_misses")}
    assert totals["prefetch_wasted"] > 0 and totals["prefetch_skipped"] > 0
    assert totals["warm_reads"] == 1 and totals["demand_misses"] > 0
    assert any(wasted for st in run.steps for *_, wasted in st.evicted)
    assert run_scenario("pressure", 5, 4, 12, 0).steps[0].kind == "prefetch"  # no pin to spare


def test_runs_are_deterministic_per_seed() -> None:
    a = run_scenario("pressure", 7, 3, 12, 5)
    clear_cache()
    b = run_scenario("pressure", 7, 3, 12, 5)
    assert a is not b and a == b
    c = run_scenario("pressure", 7, 3, 12, 6)
    assert c.route != a.route
    assert isinstance(a, ScenarioRun)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.steps[0].stats.hits = 99  # type: ignore[misc]


@pytest.mark.parametrize(("kwargs", "names"), [
    ({"slots": 4}, ("slots", "topk", "[5, 24]")),
    ({"slots": 8, "topk": 8}, ("slots", "topk", "[9, 24]")),
    ({"slots": 25}, ("slots",)),
    ({"topk": 0}, ("topk",)),
    ({"topk": 9}, ("topk",)),
    ({"scenario": "thrash"}, ("scenario",)),
    ({"schedule": 0}, ("schedule",)),
    ({"schedule": 2.5}, ("schedule",)),
    ({"seed": -1}, ("seed",)),
])
def test_bad_parameters_raise_param_error_naming_them(kwargs: dict, names: tuple) -> None:
    args = {"scenario": "prefetch then consume", "slots": 8, "topk": 4, "schedule": 4,
            "seed": 0} | kwargs
    with pytest.raises(ParamError) as err:
        run_scenario(**args)
    for name in names:
        assert name in str(err.value)


def test_fixture_is_written_once_and_checked(tmp_path: Path) -> None:
    d = fixture_dir()
    assert fixture_dir() is d and _intact(d)
    assert sorted(p.name for p in d.iterdir()) == ["manifest.json",
                                                   "model-00001-of-00001.safetensors"]
    assert (d / "model-00001-of-00001.safetensors").stat().st_size == 59_776
    damaged = tmp_path / "damaged"
    shutil.copytree(d, damaged)
    with open(damaged / "model-00001-of-00001.safetensors", "r+b") as f:
        f.truncate(53_248)
    assert not _intact(damaged)
