"""What a failure did, measured from the records: the lab's one recovery time (short class only,
so slow long documents cannot hide a short-class spike), the windowed P95, and the TTFT split
around the failure with NaN, never a stand-in number, for an empty sample.

Pins two bugs: the simulator measured recovery over all classes while the timeline measured the
short class (two different "recovery times" for one run; the all-class one read 0.0 s for a
failure that tripled the short P95), and the timeline reported -1.0 for "not recovered" and 0.0
for "no moved session".
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from core.errors import ParamError
from core.fleet.config import DEMO_SIM
from core.fleet.failover import (
    failover_windows,
    recovery_time,
    short_recovery_time,
    windowed_percentile,
)
from core.fleet.records import FailoverStats, Records
from core.fleet.simulator import simulate
from core.fleet.traces import TraceConfig, multi_turn_trace


def _records(arrival, ttft, klass, cluster=None, start=None, moved=None) -> Records:
    n = len(arrival)
    arrival = np.asarray(arrival, dtype=np.float64)
    ttft = np.asarray(ttft, dtype=np.float64)
    adm = ~np.isnan(ttft)
    return Records(
        arrival=arrival,
        klass=np.asarray(klass, dtype=np.int8),
        session=np.arange(n),
        prompt_tokens=np.full(n, 1000),
        admitted=adm,
        deferred=np.zeros(n, bool),
        cluster=np.asarray(cluster if cluster is not None else np.where(adm, 0, -1), np.int32),
        admitted_at=np.where(adm, arrival, np.nan),
        start=np.asarray(start if start is not None else np.where(adm, arrival, np.nan)),
        ttft=ttft,
        finish=np.where(adm, arrival + ttft, np.nan),
        reused_tokens=np.zeros(n, np.int64),
        on_primary=adm.copy(),
        requeued=np.zeros(n, bool),
        interrupted=np.zeros(n, bool),
        moved=np.asarray(moved if moved is not None else np.zeros(n, bool)),
    )


def _failover(fail_at=20.0, recover_at=40.0, cluster=1) -> FailoverStats:
    return FailoverStats(cluster=cluster, fail_at=fail_at, recover_at=recover_at, sessions_bound=0,
                         sessions_moved=0, cache_lost_tokens=0, requeued=0, interrupted=0,
                         recovery_time_s=None)


class TestRecoveryTime:
    """Windows of 5 s from the failure at 20 s; the limit is 1.25 x the P95 of 5-20 s."""

    @staticmethod
    def _series(spike_until: float):
        arrival = np.arange(0, 60, 0.05)
        ttft = np.where((arrival >= 20) & (arrival < spike_until), 5.0, 1.0)
        return arrival, ttft, np.ones(arrival.size, bool)

    def test_spike_then_recovery(self):
        """Windows [20,25), [25,30), [30,35) hold 5.0 s > 1.25 s; [35,40) is clean: 15 s."""
        arrival, ttft, adm = self._series(spike_until=32)
        assert recovery_time(arrival, ttft, adm, 20.0, 60.0, window_s=5.0) == 15.0

    def test_no_spike_is_zero_and_no_end_is_none(self):
        arrival, ttft, adm = self._series(spike_until=20)
        assert recovery_time(arrival, ttft, adm, 20.0, 60.0, window_s=5.0) == 0.0
        arrival, ttft, adm = self._series(spike_until=99)
        assert recovery_time(arrival, ttft, adm, 20.0, 60.0, window_s=5.0) is None

    def test_no_baseline_is_nan_not_a_verdict(self):
        """Nothing sampled before the failure: neither "recovered" nor "not recovered"."""
        arrival, ttft, adm = self._series(spike_until=32)
        got = recovery_time(arrival, ttft, adm & (arrival >= 20), 20.0, 60.0, window_s=5.0)
        assert got is not None and math.isnan(got)

    @pytest.mark.parametrize(("kwargs", "name"), [({"window_s": 0.0}, "window_s"),
                                                  ({"tolerance": 0.5}, "tolerance"),
                                                  ({"baseline_windows": 0}, "baseline_windows")])
    def test_bad_arguments_name_the_parameter(self, kwargs, name):
        arrival, ttft, adm = self._series(spike_until=32)
        args = {"window_s": 5.0, **kwargs}
        with pytest.raises(ParamError, match=name):
            recovery_time(arrival, ttft, adm, 20.0, 60.0, **args)


def test_recovery_is_measured_on_the_short_class():
    """Every 4th request is a 10 s long document; shorts spike to 5 s for 12 s after the failure.
    The short class recovers after 15 s; over all classes the longs set the limit (1.25 x 10 s)
    and the spike disappears (0.0), which is why the lab measures the short class only."""
    arrival = np.arange(0, 60, 0.05)
    klass = (np.arange(arrival.size) % 4 == 0).astype(np.int8)
    spike = (arrival >= 20) & (arrival < 32)
    ttft = np.where(klass == 1, 10.0, np.where(spike, 5.0, 1.0))
    rec = _records(arrival, ttft, klass)
    assert short_recovery_time(rec, 20.0, 60.0, 5.0) == 15.0
    assert recovery_time(rec.arrival, rec.ttft, rec.admitted, 20.0, 60.0, 5.0) == 0.0


def test_simulator_reports_the_short_class_recovery():
    """FailoverStats carries the lab's definition (the timeline figure draws the same number)."""
    trace = multi_turn_trace(TraceConfig(n_requests=2400, rate=60.0, seed=0))
    cfg = replace(DEMO_SIM, router="ring", fail_at=15.0, recover_at=30.0)
    res = simulate(trace, cfg)
    expect = short_recovery_time(res.records, 15.0, 30.0, cfg.recovery_window_s)
    assert res.failover.recovery_time_s == expect == 10.0


def test_windowed_percentile_by_hand():
    t = np.array([0.5, 1.5, 1.6, 1.7, 3.5])
    v = np.array([1.0, 2.0, 4.0, 6.0, 9.0])
    out = windowed_percentile(t, v, np.array([0.0, 1.0, 2.0, 3.0, 4.0]), q=50.0)
    assert out[0] == 1.0 and out[1] == 4.0 and math.isnan(out[2]) and out[3] == 9.0


class TestFailoverWindows:
    def test_split_by_hand(self):
        """Short TTFTs 1, 2 before the failure at 20 s; 3, 5 while down; a long is ignored;
        one moved session at 7 s; one prefill wrongly started on the dead cluster 1 at 25 s."""
        rec = _records(
            arrival=[5.0, 10.0, 21.0, 30.0, 22.0, 45.0],
            ttft=[1.0, 2.0, 3.0, 5.0, 50.0, 7.0],
            klass=[0, 0, 0, 0, 1, 0],
            cluster=[1, 0, 0, 1, 0, 2],
            start=[5.0, 10.0, 21.0, 25.0, 22.0, 45.0],
            moved=[False, False, False, False, False, True],
        )
        w = failover_windows(rec, _failover(fail_at=20.0, recover_at=40.0, cluster=1))
        assert w.short_p95_before_s == pytest.approx(1.0 + 0.95 * 1.0)
        assert w.short_p95_while_down_s == pytest.approx(3.0 + 0.95 * 2.0)
        assert w.moved_p95_s == 7.0
        assert w.started_on_failed_while_down == 1

    def test_empty_samples_are_nan(self):
        """No moved session, nothing while down: NaN, not 0.0."""
        rec = _records(arrival=[1.0, 2.0], ttft=[0.5, 0.7], klass=[0, 0])
        w = failover_windows(rec, _failover(fail_at=20.0, recover_at=None))
        assert math.isnan(w.moved_p95_s) and math.isnan(w.short_p95_while_down_s)
        assert w.short_p95_before_s == pytest.approx(0.5 + 0.95 * 0.2)
        assert w.started_on_failed_while_down == 0
