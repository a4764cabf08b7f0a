"""The per-token working-set law and LRU stack distances: hand-worked distances, the one-pass
LRU curve equals LRU replay at every capacity, and decode-order traces never reuse a key
within fewer than (layers - 1) x top-k other keys, for any number of experts."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import ParamError
from core.experts import (
    lru_cliff,
    lru_curve,
    replay,
    stack_distances,
    synthetic_trace,
    token_working_set,
)


def _trace(ids: str) -> np.ndarray:
    return np.array([[0, ord(c) - ord("A")] for c in ids], np.int32)


def test_hand_worked_stack_distances() -> None:
    # A A B A C B: first uses 0; A again after nothing -> 1; A after {B} -> 2; B after {A, C} -> 3
    assert stack_distances(_trace("AABACB")).tolist() == [0, 1, 0, 2, 0, 3]
    # keys are (layer, expert) pairs: the same expert in two layers is two keys
    two_layers = np.array([[0, 1], [1, 1], [0, 1]], np.int32)
    assert stack_distances(two_layers).tolist() == [0, 0, 2]
    assert stack_distances(np.zeros((0, 2), np.int32)).tolist() == []


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lru_curve_equals_lru_replay_at_every_capacity(seed: int) -> None:
    tr = synthetic_trace(48, 3, 12, 3, 0.8, 0.4, seed)
    caps = list(range(1, 3 * 12 + 2))
    want = [replay(tr, c, "lru").hit_rate for c in caps]
    assert lru_curve(tr, caps).tolist() == want


@pytest.mark.parametrize(("layers", "topk"), [(1, 1), (2, 3), (4, 2), (8, 2)])
def test_decode_order_cannot_hit_below_the_cliff(layers: int, topk: int) -> None:
    cliff = lru_cliff(layers, topk)
    assert cliff == (layers - 1) * topk + 1
    assert token_working_set(layers, topk) == layers * topk
    for n_experts in (topk + 1, 16, 200):  # whatever the experts per layer
        tr = synthetic_trace(40, layers, n_experts, topk, 0.7, 0.6, 5)
        d = stack_distances(tr)
        assert d[d > 0].min() >= cliff
        if cliff > 1:
            assert replay(tr, cliff - 1, "lru").hits == 0
    # the bound is met when an expert is last in its layer for one token and first for the next
    d = stack_distances(_rotating(layers, topk))
    assert d[d > 0].min() == cliff


def _rotating(layers: int, topk: int) -> np.ndarray:
    """Two decode-order tokens choosing the same top-k per layer, the last one moved first."""
    order = [list(range(topk)), [topk - 1, *range(topk - 1)]]
    return np.array([[la, e] for o in order for la in range(layers) for e in o], np.int32)


def test_bad_input_names_the_parameter() -> None:
    with pytest.raises(ParamError, match="moe_layers"):
        lru_cliff(0, 2)
    with pytest.raises(ParamError, match="topk"):
        token_working_set(3, 0)
    with pytest.raises(ParamError, match="capacity"):
        lru_curve(_trace("AB"), [0])
