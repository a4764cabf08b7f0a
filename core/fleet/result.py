"""SimResult: everything one simulate() call returns, bundled for figures and the benchmark.

Its own module so records.py (the columns) and metrics.py (summaries of the columns) need not
import each other: metrics imports records, and this module imports both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.fleet.config import SimConfig
from core.fleet.metrics import Summary
from core.fleet.records import FailoverStats, Records


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class SimResult:
    """Everything a figure needs from one run: records, summary, load over time, failover."""

    config: SimConfig
    records: Records
    summary: Summary
    load_times: np.ndarray  # (bins,) sample times, seconds
    load_series: np.ndarray  # (bins, clusters) outstanding requests (queued + prefilling)
    failover: FailoverStats | None
    duration_s: float
