"""What a failure did to latency, measured from the records alone.

recovery time (the lab's one definition, used by the simulator's FailoverStats and the timeline):
    over admitted SHORT requests (the class with the tight SLO), windows of window_s seconds of
    arrival time from the failure; the baseline is the P95 TTFT of the `baseline_windows`
    windows before it. Recovery is the end of the last window whose P95 exceeds tolerance x the
    baseline, or 0.0 if none does; None when the final window before t_end (the rejoin, or the
    last arrival) still exceeds it (not recovered); NaN when there is no short request in the
    baseline windows (nothing to recover to).

Short only, on purpose: long documents dominate an all-class P95 (seconds of prefill each), so an
all-class baseline hides the short class's spike and reports 0.0 for a failure that tripled the
short P95.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from core.errors import check_float, check_int
from core.fleet.budgets import CLASSES
from core.fleet.metrics import percentile
from core.fleet.records import FailoverStats, Records

SHORT = CLASSES.index("short")


def recovery_time(
    arrival: np.ndarray,
    ttft: np.ndarray,
    sample: np.ndarray,
    t_fail: float,
    t_end: float,
    window_s: float,
    tolerance: float = 1.25,
    baseline_windows: int = 3,
) -> float | None:
    """Seconds from t_fail to the end of the last window in [t_fail, t_end) whose P95 TTFT exceeds
    tolerance x the P95 over the `baseline_windows` windows before the failure.

    `sample` masks the requests measured (admitted ones, of one class). 0.0 if no window exceeds
    the limit; None if the final window still does (not recovered); NaN if no sampled request
    arrived in the baseline windows. Windows are over arrival time.
    """
    check_float("window_s", window_s, 1e-9, math.inf)
    check_float("tolerance", tolerance, 1.0, math.inf)
    check_int("baseline_windows", baseline_windows, 1, 10**6)
    keep = np.asarray(sample, dtype=bool)
    t, lat = np.asarray(arrival)[keep], np.asarray(ttft)[keep]
    before = lat[(t >= t_fail - baseline_windows * window_s) & (t < t_fail)]
    if before.size == 0:
        return math.nan
    limit = tolerance * percentile(before, 95.0)
    n_windows = max(1, math.ceil((t_end - t_fail) / window_s))
    last_bad = 0
    for j in range(n_windows):
        lo, hi = t_fail + j * window_s, min(t_fail + (j + 1) * window_s, t_end)
        w = lat[(t >= lo) & (t < hi)]
        if w.size and percentile(w, 95.0) > limit:
            if j == n_windows - 1:
                return None
            last_bad = j + 1
    return last_bad * window_s


def short_recovery_time(
    records: Records, t_fail: float, t_end: float, window_s: float
) -> float | None:
    """The lab's recovery time: recovery_time over the admitted short requests."""
    short = records.admitted & (records.klass == SHORT)
    return recovery_time(records.arrival, records.ttft, short, t_fail, t_end, window_s)


def windowed_percentile(
    t: np.ndarray, values: np.ndarray, edges: np.ndarray, q: float = 95.0
) -> np.ndarray:
    """Percentile q of values whose t falls in [edges[i], edges[i + 1]); NaN for empty windows."""
    t, values = np.asarray(t, dtype=np.float64), np.asarray(values, dtype=np.float64)
    bins = np.searchsorted(edges, t, side="right") - 1
    out = np.full(len(edges) - 1, np.nan)
    for i in range(len(edges) - 1):
        w = values[bins == i]
        if w.size:
            out[i] = percentile(w, q)
    return out


class FailoverWindows(NamedTuple):
    """TTFT around one failure; NaN where a sample is empty (never a made-up number)."""

    short_p95_before_s: float  # admitted short requests that arrived before the failure
    short_p95_while_down_s: float  # ... that arrived while the cluster was down
    moved_p95_s: float  # first turns of moved sessions (served elsewhere, cold)
    started_on_failed_while_down: int  # prefills started on the dead cluster: must be 0


def failover_windows(records: Records, failover: FailoverStats) -> FailoverWindows:
    """Split the admitted requests at the failure and the rejoin (never, if recover_at is None)."""
    rec, fail_at = records, failover.fail_at
    back_at = math.inf if failover.recover_at is None else failover.recover_at
    short = rec.admitted & (rec.klass == SHORT)
    before = rec.arrival < fail_at
    during = (rec.arrival >= fail_at) & (rec.arrival < back_at)
    started_down = (rec.admitted & (rec.cluster == failover.cluster) & (rec.start >= fail_at)
                    & (rec.start < back_at))
    return FailoverWindows(
        short_p95_before_s=percentile(rec.ttft[short & before], 95.0),
        short_p95_while_down_s=percentile(rec.ttft[short & during], 95.0),
        moved_p95_s=percentile(rec.ttft[rec.moved & rec.admitted], 95.0),
        started_on_failed_while_down=int(np.count_nonzero(started_down)),
    )
