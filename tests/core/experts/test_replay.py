"""Trace replay: fast policies equal their naive twins, LRU equals the live cache counter for
counter, Belady bounds LRU and LFU, and 1M requests replay under LRU within 3 s."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.errors import ParamError
from core.experts import (
    POLICIES,
    ExpertCache,
    ShardIndex,
    compulsory_ceiling,
    hit_rate_curve,
    naive_replay,
    next_use,
    replay,
    synthetic_trace,
    trace_keys,
)

from .conftest import BUDGET_8


def _random_trace(seed: int, n: int, layers: int, experts: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, layers, n), rng.integers(0, experts, n)], 1).astype(np.int32)


def _naive_next_use(keys: np.ndarray) -> np.ndarray:
    seen: dict[int, int] = {}
    out = np.empty(len(keys), np.int64)
    for i in range(len(keys) - 1, -1, -1):
        out[i] = seen.get(int(keys[i]), len(keys))
        seen[int(keys[i])] = i
    return out


def test_next_use_matches_backward_loop() -> None:
    keys = trace_keys(_random_trace(1, 2_000, 3, 10))
    assert np.array_equal(next_use(keys), _naive_next_use(keys))


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_equals_naive(policy: str, seed: int) -> None:
    trace = synthetic_trace(60, 2, 16, 3, 1.0, 0.5, seed)
    for cap in (1, 4, 7, 12, 40):
        assert replay(trace, cap, policy) == naive_replay(trace, cap, policy), cap


def test_belady_bounds_online_policies_and_reaches_the_ceiling() -> None:
    trace = synthetic_trace(200, 4, 32, 4, 1.1, 0.6, 7)
    distinct = len(np.unique(trace_keys(trace)))
    for cap in (5, 16, 40, 90):
        b = replay(trace, cap, "belady").hits
        assert b >= replay(trace, cap, "lru").hits and b >= replay(trace, cap, "lfu").hits
    assert replay(trace, distinct, "belady").hit_rate == pytest.approx(compulsory_ceiling(trace))


def test_stack_policies_are_monotone_in_capacity() -> None:
    trace = synthetic_trace(150, 3, 24, 4, 0.8, 0.4, 3)
    curve = hit_rate_curve(trace, list(range(5, 73, 4)), ("lru", "belady"))
    for rates in curve.values():
        assert np.all(np.diff(rates) >= 0)


@pytest.mark.parametrize("compat", ["k3-v1", None], ids=["compat", "fixed"])
@pytest.mark.parametrize("seed", [0, 1])
def test_lru_replay_equals_live_cache(k3_dir: Path, compat, seed: int) -> None:
    """Same gets through the cache and through replay: hits, misses, evictions all equal."""
    trace = synthetic_trace(40, 1, 24, 4, 0.7, 0.5, seed)
    with ExpertCache(ShardIndex.open(k3_dir), 1, 24, 4, BUDGET_8, compat=compat) as c:
        for i, (layer, e) in enumerate(trace):
            if i % 4 == 0:
                c.begin_layer()  # token-major trace: a token's 4 gets, then its leases end
            c.get(layer, e)
        live = c.stats()
        recorded = c.trace()
    assert np.array_equal(recorded, trace)
    r = replay(recorded, c.n_slots, "lru")
    assert (r.hits, r.misses, r.evictions) == (live["hits"], live["misses"], live["evictions"])


def test_one_million_requests_replay_counts() -> None:
    """1M requests replay end to end (its speed is `python -m core.bench experts`'s target)."""
    trace = synthetic_trace(20_000, 25, 64, 2, 1.0, 0.5, 0)
    assert len(trace) == 1_000_000
    r = replay(trace, 256, "lru")
    assert r.requests == 1_000_000 and 0 < r.hits < r.requests
    assert r.hits + r.misses == r.requests


def test_bad_input() -> None:
    with pytest.raises(ParamError, match=r"\(n, 2\) integer"):
        replay(np.zeros((4, 3), np.int32), 4)
    with pytest.raises(ParamError, match="non-negative"):
        replay(np.array([[0, -1]]), 4)
    with pytest.raises(ParamError, match="capacity"):
        replay(np.zeros((4, 2), np.int32), 0)
    with pytest.raises(ParamError, match="policy"):
        replay(np.zeros((4, 2), np.int32), 4, "fifo")
    assert replay(np.zeros((0, 2), np.int32), 4).requests == 0
