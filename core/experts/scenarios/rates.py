"""Hit rates of a scenario run, per window and over the whole run, as the figures show them.

Raw and upstream-aggregate rates are per request (upstream's denominator); the exact rates are
per get (demand_requests). Fixed mode, which every scenario runs, counts no warm() as a request,
so the two denominators agree there. The aggregate is clamped at 0 as upstream clamps it.
"""

from __future__ import annotations

from typing import NamedTuple

from core.experts.scenarios.records import ScenarioRun, Window


class HitRates(NamedTuple):
    """Hit rates in %."""

    raw: float  # hits / requests
    aggregate: float  # upstream: max(hits - prefetch_reads, 0) / requests
    exact_resident: float  # resident hits / gets
    exact_prefetched: float  # prefetched hits / gets (resident + prefetched = raw)


class RunTotals(NamedTuple):
    rates: HitRates  # summed over every window
    wrong_windows: int  # windows with gets whose aggregate is off
    windows_with_gets: int


def pct(num: int, den: int) -> float:
    """100 num / den, 0 when den is 0."""
    return 100.0 * num / den if den else 0.0


def window_rates(w: Window) -> HitRates:
    s = w.stats
    return HitRates(pct(s.hits, s.requests), pct(s.upstream_resident_hits, s.requests),
                    pct(s.hits_resident, s.demand_requests),
                    pct(s.hits_prefetched, s.demand_requests))


def run_totals(run: ScenarioRun) -> RunTotals:
    """Rates over the whole run: the window counters summed, then divided (not averaged)."""
    s = [w.stats for w in run.windows]
    req = sum(x.requests for x in s)
    gets = sum(x.demand_requests for x in s)
    rates = HitRates(
        pct(sum(x.hits for x in s), req),
        pct(sum(x.upstream_resident_hits for x in s), req),
        pct(sum(x.hits_resident for x in s), gets),
        pct(sum(x.hits_prefetched for x in s), gets),
    )
    return RunTotals(rates, sum(w.aggregate_wrong for w in run.windows),
                     sum(w.requests > 0 for w in run.windows))
