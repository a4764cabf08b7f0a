"""Scenario hit rates (what the hit-rate figure draws), against hand-worked schedules.

Knobs 8 slots, top-4, 4 tokens, seed 0 route T1 (2, 13, 3, 4), T2 (3, 2, 4, 19),
T3 (3, 2, 1, 18), T4 (3, 2, 18, 12) (test_scenarios.py pins it and derives each window).
Totals sum the counters over the windows, then divide: they are not averages of window rates.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.experts.scenarios import HitRates, pct, run_scenario, run_totals, window_rates


def test_consume_one_only_totals() -> None:
    """Every get hits: 20 of 20. Batch reads per window 4, 2, 1, 1, 1 against 4 hits each give
    hits - reads = 0, 2, 3, 3, 3, so the aggregate claims 11 resident (55%). Truly 3 hits were
    first uses of prefetches (0 in W0, 2 in W1, 3 in W2): 17 resident (85%), 3 prefetched (15%).
    The aggregate is wrong in W0, W1, W3, W4 (errors -3, -1, -1, -1)."""
    t = run_totals(run_scenario("consume one only", 8, 4, 4, 0))
    assert t.rates == HitRates(100.0, 55.0, 85.0, 15.0)
    assert (t.wrong_windows, t.windows_with_gets) == (4, 5)


def test_reset_window_totals() -> None:
    """W0 only batches (no gets; its hits - reads = -4 is clamped and counts 0). Then 4 gets a
    window, all hits: 20. hits - reads in W1..W5 = 4-2, 4-1, 4-1, 4-1, 4-0 = 15 (75%). Resident
    hits 0, 2, 3, 3, 3 = 11 (55%); prefetched 4, 2, 1, 1, 1 = 9 (45%). Wrong: W1, W2, W5."""
    t = run_totals(run_scenario("reset window", 8, 4, 4, 0))
    assert t.rates == HitRates(100.0, 75.0, 55.0, 45.0)
    assert (t.wrong_windows, t.windows_with_gets) == (3, 5)


def test_window_rates_and_the_clamp() -> None:
    """Pressure at 6 slots, W1: 8 gets, 4 prefetched hits and 4 misses, 5 batch reads:
    hits - reads = -1, clamped to 0 resident; raw 50%, exact 0% resident + 50% prefetched."""
    w = run_scenario("pressure", 6, 4, 4, 0).windows[1]
    assert w.stats.aggregate_clamped
    assert window_rates(w) == HitRates(50.0, 0.0, 0.0, 50.0)
    w0 = run_scenario("consume one only", 8, 4, 4, 0).windows[0]
    assert window_rates(w0) == HitRates(100.0, 0.0, 75.0, 25.0)


def test_a_window_without_gets_has_zero_rates() -> None:
    w = run_scenario("reset window", 8, 4, 4, 0).windows[0]
    assert w.requests == 0 and window_rates(w) == HitRates(0.0, 0.0, 0.0, 0.0)
    assert pct(3, 0) == 0.0 and pct(1, 3) == pytest.approx(33.333333)


def test_claims_only_published() -> None:
    """Truncated shard, W0: one load published (expert 0, 1,632 B); the batch's four reads and
    get(23) failed and claim nothing. A window claiming one byte more is caught."""
    w = run_scenario("truncated shard", 8, 4, 4, 0).windows[0]
    assert (w.published, w.failed, w.stats.bytes_read) == (1, 5, 1_632)
    assert w.claims_only_published
    bad = replace(w, stats=replace(w.stats, bytes_read=1_633))
    assert not bad.claims_only_published
