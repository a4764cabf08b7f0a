"""The router bake-off: every router on one trace, and the Pareto mask checked against the
definition written as a plain double loop (and on a hand-worked example)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ParamError
from core.fleet.bakeoff import compare_routers, pareto_front
from core.fleet.config import SimConfig
from core.fleet.routers import ROUTERS
from core.fleet.traces import TraceConfig, multi_turn_trace

SMALL_VALUES = st.integers(0, 6).map(float)  # few distinct values: ties are common


def _dominated(i: int, cost: list[float], gain: list[float]) -> bool:
    """Some other point is at least as good on both and strictly better on one."""
    return any(
        cost[j] <= cost[i] and gain[j] >= gain[i] and (cost[j] < cost[i] or gain[j] > gain[i])
        for j in range(len(cost))
    )


def test_pareto_front_by_hand():
    """Minimise cost, maximise gain: (1, .5) and (2, .9) survive; (3, .8) and (2, .4) do not."""
    cost = np.array([1.0, 2.0, 3.0, 2.0])
    gain = np.array([0.5, 0.9, 0.8, 0.4])
    assert pareto_front(cost, gain).tolist() == [True, True, False, False]


@settings(max_examples=100, deadline=None)
@given(points=st.lists(st.tuples(SMALL_VALUES, SMALL_VALUES), min_size=1, max_size=12))
def test_pareto_front_equals_the_definition(points):
    cost, gain = [p[0] for p in points], [p[1] for p in points]
    expect = [not _dominated(i, cost, gain) for i in range(len(points))]
    assert pareto_front(np.array(cost), np.array(gain)).tolist() == expect


def test_routers_on_one_trace():
    trace = multi_turn_trace(TraceConfig(n_requests=1500, rate=60.0, seed=7))
    results = compare_routers(trace, SimConfig())
    assert tuple(results) == ROUTERS
    hit = {r: res.summary.hit_rate for r, res in results.items()}
    assert hit["cache_aware"] > hit["round_robin"] + 0.1
    assert hit["ring"] > hit["round_robin"] + 0.1
    assert results["ring"].summary.on_primary_rate == 1.0
    for res in results.values():
        assert res.records.admitted.all() and res.failover is None


def test_unknown_router_is_refused():
    trace = multi_turn_trace(TraceConfig(n_requests=50, seed=1))
    with pytest.raises(ParamError, match="router"):
        compare_routers(trace, SimConfig(), routers=("ring", "random"))
