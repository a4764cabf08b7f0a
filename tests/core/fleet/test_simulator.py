"""Fleet simulator: the prefill cost model by hand, per-cluster concurrency, failover (no request
reaches a dead cluster; ring sessions move to their old secondary, cold; in-flight requests
rebuilt from the records are exactly the interrupted ones), and budgets that never put a
rejection into a percentile, checked by a sweep over the records."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from core.errors import ParamError
from core.fleet.budgets import BudgetConfig
from core.fleet.config import DEMO_BUDGET, SimConfig
from core.fleet.metrics import SEED_SENTINEL, naive_p95_with_rejections_as_sentinel
from core.fleet.mooncake import load_mooncake_jsonl, to_mooncake_lines
from core.fleet.ring import ConsistentHashRing
from core.fleet.routers import ROUTERS
from core.fleet.simulator import simulate
from core.fleet.traces import Trace, TraceConfig, long_burst_trace, multi_turn_trace

SMALL = TraceConfig(n_requests=1500, rate=60.0, seed=7)
FAIL = SimConfig(fail_cluster=2, fail_at=8.0, recover_at=18.0)


@pytest.fixture(scope="module")
def small_trace() -> Trace:
    return multi_turn_trace(SMALL)


def _hand_trace(rows: list[tuple[float, int, int, list[int]]]) -> Trace:
    """rows: (arrival, session, prompt tokens, block ids); short class, 10 output tokens."""
    counts = [len(r[3]) for r in rows]
    return Trace(
        arrival=np.array([r[0] for r in rows], dtype=np.float64),
        klass=np.zeros(len(rows), dtype=np.int8),
        key=np.array([r[1] for r in rows], dtype=np.int64),
        session=np.array([r[1] for r in rows], dtype=np.int64),
        prompt_len=np.array([r[2] for r in rows], dtype=np.int64),
        output_len=np.full(len(rows), 10, dtype=np.int64),
        block_offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        block_ids=np.array([b for r in rows for b in r[3]], dtype=np.int64),
    )


class TestCostModel:
    CFG = SimConfig(clusters=1, slots=1, prefill_tok_s=1000.0, hit_cost=0.1, decode_step_s=0.5)

    def test_reused_tokens_are_cheap(self):
        trace = _hand_trace([(0.0, 1, 2048, [1, 2, 3, 4]), (10.0, 1, 3072, [1, 2, 3, 4, 5, 6])])
        rec = simulate(trace, self.CFG).records
        assert rec.ttft[0] == pytest.approx(2.048 + 0.5)
        assert rec.reused_tokens.tolist() == [0, 2048]
        assert rec.ttft[1] == pytest.approx(1.024 + 0.2048 + 0.5)

    def test_checkpoint_stride_rounds_hits_down(self):
        trace = _hand_trace([(0.0, 1, 2048, [1, 2, 3, 4]), (10.0, 1, 3072, [1, 2, 3, 4, 5, 6])])
        rec = simulate(trace, replace(self.CFG, checkpoint_blocks=3)).records
        assert rec.reused_tokens[1] == 3 * 512

    def test_full_hit_resumes_at_the_last_boundary_before_the_end(self):
        """A 2-block prompt seen before: one token must run for the logits, and a hybrid model
        resumes only at a checkpoint (a block boundary), so block 2 is recomputed (the engine's
        rule, core.prefix.rule; attention-only caches would reuse 1,023 tokens)."""
        trace = _hand_trace([(0.0, 1, 1024, [1, 2]), (10.0, 1, 1024, [1, 2])])
        assert simulate(trace, self.CFG).records.reused_tokens[1] == 512

    def test_queueing_adds_wait(self):
        trace = _hand_trace([(0.0, 1, 1000, []), (0.0, 2, 1000, [])])
        rec = simulate(trace, self.CFG).records
        assert rec.wait.tolist() == [0.0, pytest.approx(1.0)]
        assert rec.ttft[1] == pytest.approx(1.0 + 1.0 + 0.5)

    def test_prefills_never_exceed_slots(self, small_trace):
        cfg = SimConfig(slots=2)
        rec = simulate(small_trace, cfg).records
        end = rec.arrival + rec.ttft - cfg.decode_step_s  # prefill end
        for c in range(cfg.clusters):
            m = rec.cluster == c
            events = sorted(
                [(t, 1) for t in rec.start[m]] + [(t, -1) for t in end[m]],
                key=lambda e: (e[0], e[1]),
            )
            depth = np.cumsum([d for _, d in events])
            assert depth.max() <= cfg.slots


class TestDeterminism:
    def test_same_inputs_same_records(self, small_trace):
        a, b = simulate(small_trace, FAIL).records, simulate(small_trace, FAIL).records
        for f in ("admitted", "cluster", "start", "ttft", "reused_tokens", "moved"):
            assert np.array_equal(getattr(a, f), getattr(b, f), equal_nan=True), f


class TestFailover:
    @pytest.mark.parametrize("router", ROUTERS)
    def test_no_request_reaches_the_dead_cluster(self, small_trace, router):
        res = simulate(small_trace, replace(FAIL, router=router))
        rec = res.records
        down = (rec.start >= FAIL.fail_at) & (rec.start < FAIL.recover_at)
        assert down.sum() > 100
        assert not np.any(rec.cluster[down] == FAIL.fail_cluster)
        assert res.failover is not None and res.failover.cache_lost_tokens > 0
        assert res.load_series.shape == (FAIL.load_bins, FAIL.clusters)

    def test_ring_sessions_move_to_their_old_secondary_cold(self, small_trace):
        res = simulate(small_trace, replace(FAIL, router="ring"))
        rec, ring = res.records, ConsistentHashRing(range(FAIL.clusters), vnodes=FAIL.vnodes)
        moved = np.flatnonzero(rec.moved)
        assert moved.size == res.failover.sessions_moved > 5
        for i in moved:
            primary, secondary = ring.route(int(small_trace.key[i]))
            assert primary == FAIL.fail_cluster and rec.cluster[i] == secondary
        warm = rec.admitted & ~rec.moved & (rec.arrival < FAIL.fail_at)
        assert rec.reused_tokens[moved].mean() < rec.reused_tokens[warm].mean()

    def test_recovered_cluster_serves_again(self, small_trace):
        rec = simulate(small_trace, replace(FAIL, router="ring")).records
        assert np.any((rec.cluster == FAIL.fail_cluster) & (rec.start >= FAIL.recover_at))

    def test_in_flight_requests_are_interrupted_or_requeued(self, small_trace):
        """Rebuilt from the records and the trace alone: exactly the requests decoding on the
        failed cluster at fail_at (first token delivered, last token not yet) are interrupted,
        their finish cut to the failure; every requeued request arrived before the failure and
        started after it, elsewhere. FailoverStats counts the same sets."""
        res = simulate(small_trace, replace(FAIL, router="ring"))
        rec, fail_at = res.records, FAIL.fail_at
        first = rec.arrival + rec.ttft
        natural_end = first + np.maximum(small_trace.output_len - 1, 0) * FAIL.decode_step_s
        ran_there = rec.admitted & (rec.cluster == FAIL.fail_cluster) & (rec.start < fail_at)
        decoding = ran_there & (first <= fail_at) & (natural_end >= fail_at)
        assert decoding.sum() > 5
        assert np.array_equal(rec.interrupted, decoding)
        assert np.all(rec.finish[decoding] == fail_at)
        assert np.all(rec.finish[ran_there & ~decoding] < fail_at)  # done before it failed
        requeued = rec.requeued
        assert requeued.sum() > 0
        assert np.all(rec.arrival[requeued] < fail_at) and np.all(rec.start[requeued] >= fail_at)
        assert not np.any(rec.cluster[requeued] == FAIL.fail_cluster)
        fo = res.failover
        assert (fo.requeued, fo.interrupted) == (int(requeued.sum()), int(decoding.sum()))

    @pytest.mark.parametrize("router", ["ring", "cache_aware"])
    def test_interrupted_requests_are_slo_misses(self, small_trace, router):
        """Decodes cut off by the failure used to count as successes (their TTFT was fast)."""
        res = simulate(small_trace, replace(FAIL, router=router))
        rec, s = res.records, res.summary
        cut = rec.interrupted
        assert cut.sum() > 5 and np.all(rec.admitted[cut])
        slo = np.asarray(FAIL.slo_s)[rec.klass]
        fast_but_cut = cut & (rec.ttft <= slo)
        assert fast_but_cut.sum() > 0, "the scenario must have interrupted requests within SLO"
        assert np.all(rec.finish[cut] == FAIL.fail_at)  # decode ended at the failure
        assert np.all(rec.arrival[cut] + rec.ttft[cut] <= FAIL.fail_at)  # first token came first
        met = rec.admitted & ~cut & (rec.ttft <= slo)
        assert s.overall.interrupted == res.failover.interrupted == int(cut.sum())
        assert s.overall.completed == int((rec.admitted & ~cut).sum())
        assert s.overall.slo_attainment == pytest.approx(met.sum() / rec.n)
        assert s.overall.slo_attainment < (met | fast_but_cut).sum() / rec.n
        for k, name in enumerate(("short", "long")):
            c, m = s.by_class(name), rec.klass == k
            assert c.interrupted == int((cut & m).sum())
            assert c.slo_attainment == pytest.approx((met & m).sum() / m.sum())
            # TTFT percentiles keep every admitted request that produced a first token
            assert c.n_ttft == int((rec.admitted & m).sum())


@pytest.fixture(scope="module")
def burst() -> Trace:
    return long_burst_trace(seed=1)


class TestBudgetsInTheFleet:
    def test_rejections_never_enter_a_percentile(self, burst):
        res = simulate(burst, SimConfig(router="least_loaded", budget=DEMO_BUDGET))
        rec, long_ = res.records, res.summary.by_class("long")
        rejected = ~rec.admitted
        assert rejected.sum() == res.summary.overall.rejected > 0
        assert np.all(np.isnan(rec.ttft[rejected])) and np.all(rec.cluster[rejected] == -1)
        m = (rec.klass == 1) & rec.admitted
        assert long_.p95 == pytest.approx(float(np.percentile(rec.ttft[m], 95)))
        lm = rec.klass == 1
        assert naive_p95_with_rejections_as_sentinel(rec.ttft[lm], rec.admitted[lm]) == (
            SEED_SENTINEL
        )

    def test_budget_isolates_short_requests_from_a_long_burst(self, burst):
        off = simulate(burst, SimConfig(router="least_loaded")).summary.by_class("short")
        on = simulate(burst, SimConfig(router="least_loaded", budget=DEMO_BUDGET))
        short = on.summary.by_class("short")
        assert short.rejected == 0 and short.p95 < off.p95 / 2
        assert short.slo_attainment >= off.slo_attainment

    def test_queue_mode_rejects_nothing_below_its_bound(self, burst):
        budget = replace(DEMO_BUDGET, mode="queue", queue_limit=burst.n)
        res = simulate(burst, SimConfig(router="least_loaded", budget=budget))
        rec = res.records
        assert rec.admitted.all() and rec.deferred.sum() > 0
        assert np.all(rec.ttft[rec.deferred] >= rec.wait[rec.deferred])


class TestBudgetHolds:
    """The budget is a cap on weight in flight: rebuild every admitted request's hold
    [admitted_at, finish) from the records alone and sweep; the sum never exceeds the budget."""

    @staticmethod
    def _max_in_flight(rec, weights, k) -> int:
        m = rec.admitted & (rec.klass == k)
        events = [(t, -1) for t in rec.finish[m]] + [(t, 1) for t in rec.admitted_at[m]]
        events.sort()  # at a tie the release comes first, as in the simulator
        depth = np.cumsum([d for _, d in events]) * weights[k]
        return int(depth.max(initial=0))

    @pytest.mark.parametrize("mode", ["reject", "queue"])
    @pytest.mark.parametrize("fail", [False, True])
    def test_weight_in_flight_never_exceeds_the_budget(self, burst, mode, fail):
        budget = replace(DEMO_BUDGET, mode=mode, budgets=(24, 12))
        cfg = SimConfig(router="least_loaded", budget=budget)
        if fail:
            cfg = replace(cfg, fail_cluster=1, fail_at=14.0, recover_at=20.0)
        res = simulate(burst, cfg)
        rec = res.records
        adm = rec.admitted
        assert not np.isnan(rec.admitted_at[adm]).any() and not np.isnan(rec.finish[adm]).any()
        assert np.all(rec.admitted_at[adm] >= rec.arrival[adm])
        assert np.all(rec.start[adm] >= rec.admitted_at[adm])
        assert np.all(rec.finish[adm] >= rec.arrival[adm] + rec.ttft[adm])
        assert np.all(rec.admitted_at[adm & ~rec.deferred] == rec.arrival[adm & ~rec.deferred])
        if fail:
            assert rec.interrupted.sum() > 0
        for k in range(2):
            peak = self._max_in_flight(rec, budget.weights, k)
            assert peak <= budget.budgets[k]
            # the cap binds: otherwise the test would prove nothing
            assert peak > budget.budgets[k] - budget.weights[k]

    def test_sweep_catches_an_overbooked_budget(self, burst):
        """The checker itself: with the budget off, the same sweep goes far over 12 units."""
        rec = simulate(burst, SimConfig(router="least_loaded")).records
        assert self._max_in_flight(rec, (1, 3), 1) > 12


def test_mooncake_trace_runs(small_trace):
    lines = to_mooncake_lines(small_trace)[:400]
    trace = load_mooncake_jsonl(lines)
    res = simulate(trace, SimConfig(router="cache_aware"))
    assert res.summary.overall.offered == 400 and res.summary.hit_rate > 0


class TestConfigAndRecords:
    @pytest.mark.parametrize(
        "kwargs, match",
        [
            ({"clusters": 0}, "clusters"),
            ({"slots": 0}, "slots"),
            ({"router": "random"}, "router"),
            ({"hit_cost": 2.0}, "hit_cost"),
            ({"clusters": 1, "fail_cluster": 0, "fail_at": 1.0}, "clusters"),
            ({"fail_cluster": 8, "fail_at": 1.0}, "fail_cluster"),
            ({"fail_cluster": 1}, "fail_at"),
            ({"fail_cluster": 1, "fail_at": 5.0, "recover_at": 4.0}, "recover_at"),
            ({"fail_at": 5.0}, "fail_cluster"),
            ({"budget": "reject"}, "budget"),
            ({"slo_s": (1.0,)}, "slo_s"),
        ],
    )
    def test_bad_config_names_the_parameter(self, kwargs, match):
        with pytest.raises(ParamError, match=match):
            SimConfig(**kwargs)

    def test_empty_trace_is_refused(self):
        with pytest.raises(ParamError, match="trace"):
            simulate(_hand_trace([]))
        with pytest.raises(ParamError, match="trace"):
            simulate(None)  # type: ignore[arg-type]

    def test_jsonl_writes_null_for_a_rejected_latency(self):
        trace = _hand_trace([(0.0, 1, 600, [1]), (0.0, 2, 600, [2])])
        budget = BudgetConfig(mode="reject", budgets=(1, 3))
        rec = simulate(trace, SimConfig(clusters=1, budget=budget)).records
        rows = [json.loads(line) for line in rec.to_jsonl().splitlines()]
        assert rows[1]["admitted"] is False and rows[1]["ttft"] is None
        assert rows[0]["klass"] == "short" and not math.isnan(rows[0]["ttft"])


def test_a_budget_that_never_binds_changes_nothing(small_trace):
    """The off mode skips finish events; a non-binding reject budget processes them all."""
    loose = BudgetConfig(mode="reject", budgets=(10**9, 10**9))
    a = simulate(small_trace, SimConfig()).records
    b = simulate(small_trace, SimConfig(budget=loose)).records
    for f in ("admitted", "cluster", "start", "ttft", "reused_tokens"):
        assert np.array_equal(getattr(a, f), getattr(b, f), equal_nan=True), f
