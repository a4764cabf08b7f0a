"""Timing helper for benchmarks: best-of-n wall time, measured side by side in one run."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeat: int = 3, warmup: int = 1) -> float:
    """Best wall time in seconds over `repeat` runs after `warmup` untimed runs."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
