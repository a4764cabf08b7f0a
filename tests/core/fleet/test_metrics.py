"""Honest metrics: percentiles over admitted requests only, rejections as SLO misses, and the
seed demo's sentinel P95 reproduced on purpose (it reads as the sentinel once > 5% are rejected)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ParamError
from core.fleet.metrics import (
    SEED_SENTINEL,
    load_stats,
    naive_p95_by_class,
    naive_p95_with_rejections_as_sentinel,
    percentile,
    percentiles,
    summarize,
    summarize_class,
)
from core.fleet.records import Records

FINITE = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


def _records(
    ttft, admitted, klass, cluster=None, prompt=None, reused=None, interrupted=None
) -> Records:
    n = len(ttft)
    adm = np.array(admitted, dtype=bool)
    t = np.where(adm, np.array(ttft, dtype=np.float64), np.nan)
    arrival = np.arange(n, dtype=np.float64)
    return Records(
        arrival=arrival,
        klass=np.array(klass, dtype=np.int8),
        session=np.arange(n),
        prompt_tokens=np.array(prompt if prompt is not None else [1000] * n, dtype=np.int64),
        admitted=adm,
        deferred=np.zeros(n, dtype=bool),
        cluster=np.where(adm, np.array(cluster if cluster is not None else [0] * n), -1),
        admitted_at=np.where(adm, arrival, np.nan),
        start=np.where(adm, arrival, np.nan),
        ttft=t,
        finish=np.where(adm, arrival + t + 1.0, np.nan),
        reused_tokens=np.array(reused if reused is not None else [0] * n, dtype=np.int64),
        on_primary=adm.copy(),
        requeued=np.zeros(n, dtype=bool),
        interrupted=(
            np.zeros(n, dtype=bool) if interrupted is None else np.array(interrupted, dtype=bool)
        ),
        moved=np.zeros(n, dtype=bool),
    )


class TestPercentile:
    @settings(max_examples=150, deadline=None)
    @given(values=st.lists(FINITE, min_size=1, max_size=60), q=st.floats(0, 100))
    def test_matches_numpy_percentile(self, values, q):
        assert percentile(values, q) == pytest.approx(
            float(np.percentile(values, q)), rel=1e-9, abs=1e-6
        )

    def test_empty_sample_is_nan_not_a_number(self):
        assert all(math.isnan(p) for p in percentiles([], (50, 95, 99)))

    def test_nan_input_is_refused(self):
        with pytest.raises(ParamError, match="NaN"):
            percentile([1.0, float("nan")], 50)

    def test_q_out_of_range(self):
        with pytest.raises(ParamError, match="q"):
            percentile([1.0], 101)


class TestClassSummary:
    def test_percentiles_ignore_rejected_requests(self):
        rng = np.random.default_rng(0)
        ttft = rng.exponential(0.5, 200)
        admitted = rng.random(200) < 0.7
        garbage = np.where(admitted, ttft, 1e9)  # whatever sits in a rejected slot is ignored
        a = summarize_class("short", ttft, admitted, np.zeros(200, bool), ttft, 1.0, 10.0)
        b = summarize_class("short", garbage, admitted, np.zeros(200, bool), ttft, 1.0, 10.0)
        assert (a.p50, a.p95, a.p99) == (b.p50, b.p95, b.p99)
        assert a.p95 == pytest.approx(float(np.percentile(ttft[admitted], 95)))
        assert a.n_ttft == admitted.sum()

    def test_rejections_count_as_slo_misses(self):
        ttft = np.array([0.1] * 6 + [5.0] * 1 + [np.nan] * 3)
        admitted = np.array([True] * 7 + [False] * 3)
        s = summarize_class("short", ttft, admitted, np.zeros(10, bool), ttft, 1.0, 2.0)
        assert (s.offered, s.admitted, s.rejected) == (10, 7, 3)
        assert s.rejection_rate == pytest.approx(0.3)
        assert s.slo_attainment == pytest.approx(0.6)
        assert s.goodput_rps == pytest.approx(3.0)

    def test_interrupted_requests_are_misses_but_keep_their_ttft(self):
        """A failure cut these decodes off after a fast first token: not successes."""
        ttft = np.array([0.1, 0.2, 0.3, 0.4, 5.0, np.nan])
        admitted = np.array([True] * 5 + [False])
        cut = np.array([False, True, True, False, False, False])
        s = summarize_class(
            "short", ttft, admitted, np.zeros(6, bool), ttft, 1.0, 2.0, interrupted=cut
        )
        assert (s.admitted, s.interrupted, s.completed, s.rejected) == (5, 2, 3, 1)
        assert s.slo_attainment == pytest.approx(2 / 6)  # only 0.1 and 0.4 completed in time
        assert s.goodput_rps == pytest.approx(1.0)
        assert s.n_ttft == 5 and s.p50 == pytest.approx(0.3)  # first tokens were delivered
        plain = summarize_class("short", ttft, admitted, np.zeros(6, bool), ttft, 1.0, 2.0)
        assert plain.interrupted == 0 and plain.slo_attainment == pytest.approx(4 / 6)

    def test_interrupted_flag_on_a_rejected_request_is_ignored(self):
        ttft = np.array([0.1, np.nan])
        s = summarize_class(
            "short",
            ttft,
            np.array([True, False]),
            np.zeros(2, bool),
            ttft,
            1.0,
            1.0,
            interrupted=np.array([False, True]),
        )
        assert s.interrupted == 0 and s.completed == 1 and s.slo_attainment == 0.5

    def test_interrupted_must_match_the_requests(self):
        with pytest.raises(ParamError, match="interrupted"):
            summarize_class(
                "short",
                np.ones(3),
                np.ones(3, bool),
                np.zeros(3, bool),
                np.ones(3),
                1.0,
                1.0,
                interrupted=np.zeros(2, bool),
            )

    def test_all_rejected_has_no_latency(self):
        s = summarize_class(
            "long",
            np.full(4, np.nan),
            np.zeros(4, bool),
            np.zeros(4, bool),
            np.full(4, np.nan),
            1.0,
            1.0,
        )
        assert s.n_ttft == 0 and math.isnan(s.p95) and s.slo_attainment == 0.0


class TestSentinel:
    def test_seed_scenario_p95_is_the_sentinel(self):
        """60 short requests against a cap of 8: 52 rejections turn the naive P95 into 2e6."""
        ttft = np.concatenate([np.linspace(0.5, 6.0, 8), np.full(52, np.nan)])
        admitted = np.arange(60) < 8
        assert naive_p95_with_rejections_as_sentinel(ttft, admitted) == SEED_SENTINEL
        honest = summarize_class("short", ttft, admitted, np.zeros(60, bool), ttft, 1.0, 1.0)
        assert honest.p95 <= 6.0 and honest.rejection_rate == pytest.approx(52 / 60)

    def test_per_class_sentinel_p95_by_hand(self):
        """Short: 2 of 20 rejected (10% > 5%) -> the sentinel; long: none rejected -> its P95."""
        ttft = [0.1] * 18 + [0.0, 0.0] + [1.0, 2.0, 3.0]
        admitted = [True] * 18 + [False, False] + [True] * 3
        rec = _records(ttft=ttft, admitted=admitted, klass=[0] * 20 + [1] * 3)
        short, long_ = naive_p95_by_class(rec)
        assert short == SEED_SENTINEL
        assert long_ == pytest.approx(2.0 + 0.9 * 1.0)  # position 0.95 * 2 = 1.9

    @pytest.mark.parametrize("n", [19, 20, 21, 60, 100, 101, 120, 1000])
    def test_thresholds_of_the_interpolated_p95(self, n):
        """With m of n rejected the P95 reaches past every real TTFT once
        m >= n - ceil(0.95 (n - 1)) and is the sentinel once m >= n - floor(0.95 (n - 1));
        at exactly 5% it is already about 0.05 x the sentinel (the module docstring)."""
        ttft = np.linspace(0.1, 2.0, n)
        pos = 0.95 * (n - 1)
        for m in range(n + 1):
            p = naive_p95_with_rejections_as_sentinel(ttft, np.arange(n) < n - m)
            assert (p > ttft.max()) == (m >= n - math.ceil(pos)), m
            assert (p == SEED_SENTINEL) == (m >= n - math.floor(pos)), m
        if n % 20 == 0:
            m = n // 20
            p = naive_p95_with_rejections_as_sentinel(ttft, np.arange(n) < n - m)
            assert p == pytest.approx(0.95 * ttft[n - m - 1] + 0.05 * SEED_SENTINEL, rel=1e-9)

    def test_without_rejections_naive_equals_honest(self):
        ttft = np.linspace(0, 1, 101)
        assert naive_p95_with_rejections_as_sentinel(ttft, np.ones(101, bool)) == pytest.approx(
            percentile(ttft, 95)
        )


class TestSummarize:
    def test_per_class_and_overall(self):
        rec = _records(
            ttft=[0.2, 0.4, 9.0, 1.0, 3.0, 0.0],
            admitted=[True, True, True, True, True, False],
            klass=[0, 0, 0, 1, 1, 1],
            cluster=[0, 1, 1, 0, 1, 0],
            reused=[500, 0, 0, 250, 0, 0],
        )
        s = summarize(rec, slo_s=(1.0, 2.0), clusters=2, duration_s=5.0)
        short, long_ = s.by_class("short"), s.by_class("long")
        assert short.slo_attainment == pytest.approx(2 / 3)
        assert long_.slo_attainment == pytest.approx(1 / 3) and long_.rejected == 1
        assert s.overall.slo_attainment == pytest.approx(3 / 6)
        assert (short.met, long_.met, s.overall.met) == (2, 1, 3)  # 0.2, 0.4 | 1.0
        assert s.overall.goodput_rps == pytest.approx(3 / 5)
        assert s.hit_rate == pytest.approx(750 / 5000)
        assert s.served == (2, 3)
        with pytest.raises(ParamError, match="name"):
            s.by_class("medium")

    def test_interrupted_counted_per_class_and_overall(self):
        rec = _records(
            ttft=[0.2, 0.4, 0.5, 1.0, 3.0, 0.0],
            admitted=[True, True, True, True, True, False],
            klass=[0, 0, 0, 1, 1, 1],
            interrupted=[False, True, False, True, False, False],
        )
        s = summarize(rec, slo_s=(1.0, 4.0), clusters=1, duration_s=2.0)
        short, long_ = s.by_class("short"), s.by_class("long")
        assert (short.interrupted, long_.interrupted, s.overall.interrupted) == (1, 1, 2)
        assert (short.completed, long_.completed, s.overall.completed) == (2, 1, 3)
        assert short.slo_attainment == pytest.approx(2 / 3)
        assert long_.slo_attainment == pytest.approx(1 / 3)
        assert s.overall.slo_attainment == pytest.approx(3 / 6)
        assert s.overall.goodput_rps == pytest.approx(3 / 2)
        assert short.p95 == pytest.approx(float(np.percentile([0.2, 0.4, 0.5], 95)))

    def test_load_stats_by_hand(self):
        """[2, 4, 6]: mean 4, squared deviations 4 + 0 + 4 over 3 -> std sqrt(8/3), CV 0.408248."""
        st_ = load_stats([2, 4, 6])
        assert st_.max_over_mean == 1.5 and st_.min_over_mean == 0.5
        assert st_.cv == pytest.approx(0.4082483, rel=1e-6)
        assert math.isnan(load_stats([0, 0]).cv)
        with pytest.raises(ParamError, match="counts"):
            load_stats([])

