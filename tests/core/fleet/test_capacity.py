"""Capacity sweeps: each point is an ordinary simulate() run, goodput never exceeds the offered
load, the prefill cost model is the event loop's, and a prefill load above 1 means queues grow."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from core.errors import ParamError
from core.fleet.capacity import load_sweep, prefill_load, rate_trace
from core.fleet.config import DEMO_SIM, DEMO_TRACE, SimConfig
from core.fleet.routers import ROUTERS
from core.fleet.simulator import simulate
from core.fleet.traces import multi_turn_trace, poisson_trace

SMALL = replace(DEMO_TRACE, seed=1)
RATES = (20.0, 60.0)
SECONDS = 8.0


def _sweep(config: SimConfig):
    return load_sweep(RATES, SMALL, config, ROUTERS, SECONDS)


class TestRateTrace:
    def test_requests_and_rate(self):
        t = rate_trace(DEMO_TRACE, 60, 40)
        assert t.n_requests == 2400 and t.rate == 60.0 and t.seed == DEMO_TRACE.seed

    @pytest.mark.parametrize(("rate", "seconds"), [(0.0, 40), (-1, 40), (60, 0.0)])
    def test_bad_input_names_the_parameter(self, rate, seconds):
        with pytest.raises(ParamError, match="rate|seconds"):
            rate_trace(DEMO_TRACE, rate, seconds)


class TestPrefillCost:
    def test_prefill_s_is_the_event_loops_cost(self):
        """A request that started on arrival has TTFT = prefill_s(prompt, reused) + one step."""
        cfg = DEMO_SIM.without_failure()
        res = simulate(multi_turn_trace(rate_trace(SMALL, 20, SECONDS)), cfg)
        rec = res.records
        now = rec.admitted & (rec.start == rec.arrival)
        assert now.sum() > 50 and (rec.reused_tokens[now] > 0).any()
        want = cfg.prefill_s(rec.prompt_tokens[now], rec.reused_tokens[now]) + cfg.decode_step_s
        np.testing.assert_allclose(rec.ttft[now], want, rtol=1e-12, atol=1e-12)

    def test_prefill_s_by_hand(self):
        cfg = SimConfig(prefill_tok_s=1000.0, hit_cost=0.1)
        assert cfg.prefill_s(3000, 1000) == pytest.approx(2.0 + 0.1)

    def test_without_failure_removes_only_the_failure(self):
        healthy = DEMO_SIM.without_failure()
        assert healthy.fail_cluster is None and healthy.fail_at is None
        assert healthy.recover_at is None
        assert replace(healthy, fail_cluster=0, fail_at=25.0, recover_at=50.0) == DEMO_SIM


class TestPrefillLoad:
    def test_one_cluster_without_cache_by_hand(self):
        """No reuse: rate x mean prompt / prefill_tok_s, over the slots."""
        trace = poisson_trace(5.0, 20.0, seed=3)
        cfg = SimConfig(clusters=1, slots=2, cache_blocks=0, router="round_robin")
        want = 5.0 * trace.prompt_len.mean() / cfg.prefill_tok_s / cfg.slots
        assert prefill_load(simulate(trace, cfg), 5.0) == pytest.approx(want, rel=1e-12)

    def test_reuse_lowers_the_load_by_the_hit_cost(self):
        cfg = DEMO_SIM.without_failure()
        res = simulate(multi_turn_trace(rate_trace(SMALL, 20, SECONDS)), cfg)
        rec = res.records
        full = 20 * rec.prompt_tokens.mean() / cfg.prefill_tok_s / (cfg.slots * cfg.clusters)
        saved = 20 * rec.reused_tokens.mean() * (1 - cfg.hit_cost) / cfg.prefill_tok_s / (
            cfg.slots * cfg.clusters)
        assert saved > 0
        assert prefill_load(res, 20) == pytest.approx(full - saved, rel=1e-9)

    def test_above_one_the_queue_only_grows(self):
        """One slot fed 1.5x its prefill rate: the last requests wait far longer than the first,
        about (rho - 1) x their arrival time."""
        trace = poisson_trace(12.0, 30.0, prompt_tokens=(1800, 2200), seed=5)
        res = simulate(trace, SimConfig(clusters=1, slots=1, cache_blocks=0,
                                        router="round_robin", prefill_tok_s=16_000.0))
        rho = prefill_load(res, 12.0)
        wait = res.records.wait
        q = wait.size // 4
        assert rho == pytest.approx(1.5, rel=0.02)
        assert wait[-q:].mean() > 4 * wait[:q].mean()
        late = res.records.arrival[-q:].mean()
        assert wait[-q:].mean() == pytest.approx((rho - 1) * late, rel=0.35)

    def test_below_one_the_queue_stays_short(self):
        trace = poisson_trace(6.0, 30.0, prompt_tokens=(1800, 2200), seed=5)
        res = simulate(trace, SimConfig(clusters=1, slots=1, cache_blocks=0,
                                        router="round_robin", prefill_tok_s=16_000.0))
        assert prefill_load(res, 6.0) == pytest.approx(0.75, rel=0.02)
        assert float(np.max(res.records.wait)) < 2.0

    def test_nothing_admitted_is_nan(self):
        one = simulate(poisson_trace(5.0, 5.0, seed=1), SimConfig(clusters=1))
        empty = replace(one, records=replace(one.records,
                                             admitted=np.zeros_like(one.records.admitted)))
        assert math.isnan(prefill_load(empty, 5.0))


class TestLoadSweep:
    def test_every_point_is_a_plain_simulation(self):
        sweep = _sweep(DEMO_SIM)
        assert sweep.failure
        for b, rate in enumerate(RATES):
            trace = multi_turn_trace(rate_trace(SMALL, rate, SECONDS))
            assert sweep.offered_rps[b] == trace.n / trace.duration
            for router in ROUTERS:
                s = simulate(trace, replace(DEMO_SIM, router=router)).summary
                a = sweep.row(router)
                assert sweep.goodput_rps[a, b] == s.overall.goodput_rps
                assert sweep.hit_rate[a, b] == s.hit_rate
                assert sweep.slo_attainment[a, b] == s.overall.slo_attainment
                assert sweep.short_p95_s[a, b] == s.by_class("short").p95

    def test_goodput_never_exceeds_offered_load(self):
        for cfg in (DEMO_SIM, DEMO_SIM.without_failure()):
            sweep = _sweep(cfg)
            assert np.all(sweep.goodput_rps <= sweep.offered_rps[None, :] * (1 + 1e-12))
            np.testing.assert_allclose(sweep.goodput_rps / sweep.offered_rps[None, :],
                                       sweep.slo_attainment, rtol=1e-9)

    def test_healthy_sweep_has_no_failure_and_is_cached(self):
        healthy = _sweep(DEMO_SIM.without_failure())
        assert not healthy.failure
        assert _sweep(DEMO_SIM.without_failure()) is healthy

    def test_shapes(self):
        sweep = _sweep(DEMO_SIM)
        for arr in (sweep.goodput_rps, sweep.hit_rate, sweep.prefill_load, sweep.short_p95_s):
            assert arr.shape == (len(ROUTERS), len(RATES))
        assert sweep.offered_rps.shape == (len(RATES),)
        assert np.all(np.isfinite(sweep.prefill_load)) and np.all(sweep.prefill_load > 0)

    @pytest.mark.parametrize(
        ("kwargs", "name"),
        [({"rates": ()}, "rates"), ({"routers": ()}, "routers"),
         ({"routers": ("ring", "nearest")}, "router")],
    )
    def test_bad_input_names_the_parameter(self, kwargs, name):
        args = {"rates": RATES, "trace": SMALL, "config": DEMO_SIM, "routers": ROUTERS,
                "seconds": SECONDS} | kwargs
        with pytest.raises(ParamError, match=name):
            load_sweep(**args)

    def test_unknown_row(self):
        with pytest.raises(ParamError, match="router"):
            _sweep(DEMO_SIM).row("nearest")


def test_cache_blind_routing_needs_more_prefill():
    """The mechanism behind capacity: at the same load, a lower hit rate means more prefill."""
    sweep = _sweep(DEMO_SIM.without_failure())
    for b in range(len(RATES)):
        order = np.argsort(sweep.hit_rate[:, b])
        loads = sweep.prefill_load[order, b]
        assert loads[0] > loads[-1]
        assert not math.isnan(loads[0])
