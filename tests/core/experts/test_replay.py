"""Policy replay: hand-worked counts per policy, fast policies equal their naive twins, LRU
equals the live cache counter for counter, Belady bounds LRU and LFU, and 1M requests replay."""

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


# A A A B C B C A B at capacity 2, worked by hand (1-based request numbers):
#   LRU     hits 2 3 6 7; C evicts A (used at 3), A evicts B, B evicts C        4 hits, 3 ev.
#   LFU     hits 2 3 8; C evicts B (1 use), B evicts C (1), C evicts B (2 < A's 3),
#           B evicts C (2 < A's 4): counts survive eviction                     3 hits, 4 ev.
#   Belady  hits 2 3 6 7 9; C evicts A (next at 8, B's at 6), A evicts C (never again,
#           B's at 9)                                                           5 hits, 2 ev.
HAND = np.array([[0, e] for e in (5, 5, 5, 2, 9, 2, 9, 5, 2)], np.int32)  # A=5, B=2, C=9
HAND_COUNTS = {"lru": (4, 5, 3), "lfu": (3, 6, 4), "belady": (5, 4, 2)}


@pytest.mark.parametrize("policy", POLICIES)
def test_hand_worked_trace(policy: str) -> None:
    for fn in (replay, naive_replay):
        r = fn(HAND, 2, policy)
        assert (r.hits, r.misses, r.evictions) == HAND_COUNTS[policy], fn.__name__
    assert compulsory_ceiling(HAND) == pytest.approx(1 - 3 / 9)
    assert next_use(trace_keys(HAND)).tolist() == [1, 2, 7, 5, 6, 8, 9, 9, 9]


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
    assert (r.hits, r.misses, r.evictions) == (live.hits, live.misses, live.evictions)


def test_one_million_requests_replay_counts() -> None:
    """1M requests replay end to end (its speed is `python -m core.bench experts`'s target)."""
    trace = synthetic_trace(20_000, 25, 64, 2, 1.0, 0.5, 0)
    assert len(trace) == 1_000_000
    r = replay(trace, 256, "lru")
    assert r.requests == 1_000_000 and 0 < r.hits < r.requests
    assert len(np.unique(trace_keys(trace))) > 256
    assert r.evictions == r.misses - 256  # every miss after the 256 that fill the cache evicts


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
