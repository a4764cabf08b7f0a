"""Fleet figures under stress: nothing clipped silently, labels inside their axes, the colour
scale reaching the true maximum, no-latency classes said out loud, and what was not measured (or
not recovered) shown in words and NaN, never as a stand-in number such as -1 or 0."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

import tabs.fleet_ring.bounded as ring_bounded
import tabs.fleet_ring.spread as ring_spread
import tabs.fleet_sim.bakeoff as bakeoff
import tabs.fleet_sim.budgets as budgets
import tabs.fleet_sim.capacity as capacity
import tabs.fleet_sim.load as load
import tabs.fleet_sim.timeline as timeline
from core.experiments.fleet_sim import (
    BURST_DURATION,
    BURST_S,
    RATES,
    SHORT_RATE,
    budget_config,
    capacity_sweeps,
    fleet_config,
    fleet_run,
    fleet_trace,
)
from core.fleet.config import DEMO_BUDGET
from core.fleet.routers import ROUTERS
from core.fleet.simulator import simulate
from core.fleet.traces import long_burst_trace


def _inside(ax, text) -> bool:
    renderer = ax.figure.canvas.get_renderer()
    box, frame = text.get_window_extent(renderer), ax.get_window_extent(renderer)
    return (
        box.x0 >= frame.x0 - 1
        and box.x1 <= frame.x1 + 1
        and box.y0 >= frame.y0 - 1
        and box.y1 <= frame.y1 + 1
    )


def _slow_run(rate, fail_at, router, seed):
    """The failover scene with half the prefill speed: TTFTs and P95s far past the defaults."""
    cfg = replace(fleet_config(router, fail_at), prefill_tok_s=9000.0)
    return simulate(fleet_trace(rate, seed), cfg)


class TestBudgetsP95Axis:
    def test_tall_p95_fits_with_its_label_inside_the_axes(self):
        """long_budget=3: the bounded queue's long P95 is ~650 s, past the old fixed 500 s top."""
        res = budgets.fleet_sim_budgets(120, 3, 0)
        ax = res.figure.axes[1]
        p95 = res.metrics["queue_long_p95_admitted_s"]
        assert p95 > 500
        assert ax.get_ylim()[1] > p95 * budgets.LABEL_UP
        values = [t for t in ax.texts if t.get_text().replace(".", "").isdigit()]
        assert len(values) == 6 and all(_inside(ax, t) for t in values)

    def test_default_axis_is_unchanged(self):
        res = budgets.fleet_sim_budgets(120, 24, 0)
        assert res.figure.axes[1].get_ylim() == pytest.approx((0.05, 500.0))

    def test_class_without_latency_is_labelled(self, monkeypatch):
        real = budgets.budget_runs

        def no_long_admitted(*args):
            runs = list(real(*args))
            s = runs[1].summary
            c = replace(s.by_class("long"), n_ttft=0, p50=math.nan, p95=math.nan, p99=math.nan)
            runs[1] = replace(runs[1], summary=replace(s, classes=(s.classes[0], c)))
            return tuple(runs)

        monkeypatch.setattr(budgets, "budget_runs", no_long_admitted)
        ax = budgets.fleet_sim_budgets(120, 24, 0).figure.axes[1]
        notes = [t for t in ax.texts if t.get_text() == "n=0: no latency"]
        assert len(notes) == 1 and _inside(ax, notes[0])
        assert not any(t.get_text() == "nan" for t in ax.texts)

    def test_limits_helper(self):
        lo, hi = budgets.p95_limits([0.15, math.nan, 649.0, 1.0, 2.0, 3.0])
        assert lo == 0.05 and hi > 649.0 * budgets.LABEL_UP


class TestTimeline:
    def test_colour_scale_reaches_the_true_maximum(self):
        """Round-robin at 80 req/s piles 85+ requests on a cluster (the old scale stopped at 16):
        the darkest colour is the simulation's own maximum, and the colour bar says it."""
        peak = int(fleet_run(80, 15, "round_robin", 0).load_series.max())
        res = load.fleet_sim_load(80, 15, "round_robin", 0)
        heat = res.figure.axes[0].images[0]
        assert heat.get_array().max() == peak
        assert heat.norm.vmax == peak, f"the scale tops out at {heat.norm.vmax}, the data at {peak}"
        bar = res.figure.axes[2]
        assert str(peak) in [t.get_text() for t in bar.get_yticklabels()]

    def test_default_scales_hold_the_data(self):
        """At the defaults: the load colours reach the simulation's maximum without saturating,
        and the TTFT axis holds every request's TTFT (those under the floor drawn on its edge)."""
        run = fleet_run(60, 15, "ring", 0)
        heat = load.fleet_sim_load(60, 15, "ring", 0).figure.axes[0].images[0]
        assert heat.get_array().max() == run.load_series.max() <= heat.norm.vmax
        top = timeline.fleet_sim_timeline(60, 15, "ring", 0).figure.axes[0]
        y0, y1 = top.get_ylim()
        ttft = run.records.ttft[np.isfinite(run.records.ttft)]
        assert y1 > ttft.max()
        drawn = np.concatenate([c.get_offsets()[:, 1] for c in top.collections
                                if len(c.get_offsets())])
        assert drawn.size and np.all((drawn >= y0) & (drawn <= y1))

    def test_ttft_beyond_30_s_is_drawn_not_clipped(self, monkeypatch):
        monkeypatch.setattr(timeline, "fleet_run", _slow_run)
        res = timeline.fleet_sim_timeline(80, 15, "round_robin", 0)
        top = res.figure.axes[0]
        worst = float(np.nanmax(_slow_run(80, 15, "round_robin", 0).records.ttft))
        assert worst > 30
        y0, y1 = top.get_ylim()
        assert y1 > worst
        for coll in top.collections:
            ys = coll.get_offsets()[:, 1] if len(coll.get_offsets()) else np.array([])
            assert np.all((ys >= y0) & (ys <= y1))

    def test_recovery_is_the_simulators_number(self):
        """One definition: the figure shows FailoverStats.recovery_time_s for every router."""
        for router in ROUTERS:
            res = timeline.fleet_sim_timeline(60, 15, router, 0)
            fo = fleet_run(60, 15, router, 0).failover
            shown = res.metrics["short_recovery_time_s"]
            assert res.metrics["short_recovered_before_rejoin"] == (fo.recovery_time_s is not None)
            if fo.recovery_time_s is None:
                assert math.isnan(shown)
            else:
                assert shown == fo.recovery_time_s

    def test_not_recovered_is_said_in_words_and_nan(self):
        """round_robin at 60 req/s: the short P95 is still high when c0 rejoins."""
        res = timeline.fleet_sim_timeline(60, 15, "round_robin", 0)
        assert res.metrics["short_recovered_before_rejoin"] is False
        assert math.isnan(res.metrics["short_recovery_time_s"])
        title = res.figure.axes[0].get_title("left")
        assert "not recovered before the rejoin" in title and "-1" not in title

    def test_unmeasured_recovery_and_no_moved_session_are_nan(self, monkeypatch):
        """A failure after the last arrival: no request to compare with, no session moved."""

        def late_failure(rate, fail_at, router, seed):
            cfg = replace(fleet_config(router, fail_at), fail_at=200.0, recover_at=215.0)
            return simulate(fleet_trace(rate, seed), cfg)

        monkeypatch.setattr(timeline, "fleet_run", late_failure)
        res = timeline.fleet_sim_timeline(60, 15, "ring", 0)
        assert math.isnan(res.metrics["p95_moved_s"])
        assert math.isnan(res.metrics["short_recovery_time_s"])
        assert res.metrics["short_recovered_before_rejoin"] is False
        assert "recovery not measured" in res.figure.axes[0].get_title("left")

    def test_recovery_words(self):
        assert timeline.recovery_words(10.0) == "short P95 back in 10 s"
        assert "not recovered" in timeline.recovery_words(None)
        assert "not measured" in timeline.recovery_words(math.nan)

    def test_axis_top_helper(self):
        """The top clears the worst TTFT and grows with it; with no data it is still an axis."""
        worst = (0.5, 2.0, 30.0, 600.0, 20_000.0)
        tops = [timeline.ttft_top(w) for w in worst]
        assert all(top > w for top, w in zip(tops, worst, strict=True))
        assert tops == sorted(tops)
        assert math.isfinite(timeline.ttft_top(math.nan)) and timeline.ttft_top(math.nan) > 0


class TestBakeoff:
    def test_x_limits_hold_every_p95(self):
        for p95 in ([0.18, 1.5], [0.05, 42.0, np.nan], [3.0], [0.011, 9000.0]):
            lo, hi = bakeoff.x_limits(np.array(p95))
            finite = [v for v in p95 if math.isfinite(v)]
            assert 0 < lo <= min(finite) and hi >= max(finite), p95

    def test_slow_fleet_p95s_are_all_on_the_axis(self, monkeypatch):
        usual_top = bakeoff.fleet_sim_bakeoff(80, 15, "round_robin", 0).figure.axes[0].get_xlim()[1]
        monkeypatch.setattr(bakeoff, "fleet_run", _slow_run)
        res = bakeoff.fleet_sim_bakeoff(80, 15, "round_robin", 0)
        pareto = res.figure.axes[0]
        p95 = [v for k, v in res.metrics.items() if k.endswith("_short_p95_s")]
        assert max(p95) > usual_top  # past the axis the usual fleet is drawn on
        x0, x1 = pareto.get_xlim()
        assert all(x0 <= v <= x1 for v in p95)
        drawn = [float(line.get_xdata()[0]) for line in pareto.lines]
        assert sorted(drawn) == pytest.approx(sorted(p95))


class TestQueueModeLabel:
    """The budgets figure's queue mode is a BOUNDED queue (DEMO_BUDGET.queue_limit): it rejects
    once the wait queue is full. Only an effectively unbounded queue is a pure defer."""

    def test_unbounded_queue_rejects_nothing_in_the_budget_scene(self):
        trace = long_burst_trace(SHORT_RATE, BURST_DURATION, 12.0, BURST_S, 0)
        bounded = budget_config("queue", 24)
        unbounded = replace(bounded, budget=replace(bounded.budget, queue_limit=10**9))
        pure = simulate(trace, unbounded).summary
        assert pure.overall.rejected == 0 and pure.overall.admitted == trace.n
        assert pure.by_class("long").deferred > 0
        capped = simulate(trace, bounded).summary
        assert capped.by_class("long").rejected > 0  # why the figure may not say "defer"

    def test_figure_and_lesson_name_the_bound(self):
        """Read what is drawn under the bars, not the label constant: the bound is visible."""
        from pathlib import Path

        fig = budgets.fleet_sim_budgets(120, 24, 0).figure
        drawn = [t.get_text().replace("\n", " ") for ax in fig.axes for t in ax.texts]
        limit = DEMO_BUDGET.queue_limit
        assert drawn.count(f"bounded queue ({limit})") == 3  # under each of the three panels
        assert not any("defer" in t for t in drawn)
        lesson = Path(__file__).resolve().parents[2] / "assets/lessons/fleet_sim.md"
        text = lesson.read_text()
        assert "queue (defer)" not in text and f"bounded queue ({limit})" in text


class TestBoundedShading:
    """The bound is ceil(c x mean), on whole requests: a hottest cluster a hair above c x mean
    (313 of 2,000 over 8 clusters at c = 1.25, 1.252x) is attainable and must not be drawn in
    the area shaded impossible."""

    @staticmethod
    def _panel(res):
        return res.figure.axes[0]

    @pytest.mark.parametrize(("vnodes", "clusters", "c", "seed"),
                             [(8, 8, 1.25, 0), (128, 12, 1.5, 7), (8, 16, 1.05, 3)])
    def test_no_drawn_load_lies_in_the_shading(self, vnodes, clusters, c, seed):
        res = ring_bounded.fleet_ring_bounded_tradeoff(vnodes, clusters, c, seed)
        balance = self._panel(res)
        shade = balance.collections[0].get_paths()[0]
        points = [(x, y) for line in balance.lines if line.get_marker() == "o"
                  for x, y in zip(line.get_xdata(), line.get_ydata(), strict=True)]
        assert len(points) >= 2 * (len(ring_bounded.C_GRID) + 1)
        for x, y in points:
            assert y <= ring_bounded.bound_over_mean(float(x), clusters) + 1e-12
            assert not shade.contains_point((x, y - 1e-6)), (x, y)
            assert shade.contains_point((x, ring_bounded.bound_over_mean(float(x), clusters)
                                         + 0.02)), (x, y)

    def test_defaults_sit_above_c_but_on_the_bound(self):
        m = ring_bounded.fleet_ring_bounded(8, 8, 1.25, 0).metrics
        mean = ring_bounded.REQUESTS / 8
        assert m["cap_zipf_hot"] == math.ceil(1.25 * mean) == m["max_load_zipf_hot"]
        assert m["max_over_mean_s1_2"] > 1.25
        assert m["max_over_mean_s1_2"] == pytest.approx(m["bound_over_mean"])


class TestSpreadDraws:
    def test_every_draw_is_a_dot_at_every_vnode_count(self):
        from core.experiments.fleet_ring import DRAWS, SWEEP_V
        from core.fleet.spread_arrays import share_sweep

        res = ring_spread.fleet_ring_spread(8, 8, 40_000, 0)
        sweep = share_sweep(8, SWEEP_V, DRAWS)
        for ax, band in zip(res.figure.axes, (sweep.cv, sweep.max_over_mean), strict=True):
            dots = ax.collections[0].get_offsets()
            assert len(dots) == len(DRAWS) * len(SWEEP_V)
            np.testing.assert_allclose(np.sort(dots[:, 1]), np.sort(band.ravel()))
        k = SWEEP_V.index(8)
        lo, hi = sweep.max_over_mean[:, k].min(), sweep.max_over_mean[:, k].max()
        assert hi / lo > 1.2  # one draw is not the story
        assert f"draws {lo:.2f}-{hi:.2f}×" in res.figure.axes[1].get_title("left")


class TestCapacity:
    def test_curves_are_the_sweeps_numbers(self):
        healthy, failed = capacity_sweeps()
        res = capacity.fleet_sim_capacity(80, "least_loaded")
        good = res.figure.axes[0]
        ys = [np.asarray(line.get_ydata(), dtype=float) for line in good.lines]
        for r in ROUTERS:
            a = healthy.row(r)
            assert any(np.array_equal(y, healthy.goodput_rps[a]) for y in ys)
            assert any(np.array_equal(y, failed.goodput_rps[a]) for y in ys)
        assert any(np.array_equal(y, healthy.offered_rps) for y in ys)
        marks = [line for line in good.lines if list(line.get_xdata()) == [80, 80]]
        assert len(marks) == 1

    def test_redraws_reuse_one_sweep(self):
        capacity_sweeps()
        before = capacity_sweeps.cache_info()
        for rate, router in ((20, "ring"), (75, "cache_aware"), (60, "round_robin")):
            capacity.fleet_sim_capacity(rate, router)
        after = capacity_sweeps.cache_info()
        assert after.misses == before.misses and after.hits == before.hits + 3

    def test_unsaturated_router_is_nan_not_a_stand_in(self):
        m = capacity.fleet_sim_capacity(60, "ring").metrics
        for r in ROUTERS:
            v = m[f"{r}_first_saturated_rate"]
            assert math.isnan(v) or v in RATES
