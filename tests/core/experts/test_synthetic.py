"""synthetic_trace: seeded, shaped as (layer, expert) pairs, skewed and persistent on demand."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import ParamError
from core.experts import repeats_previous, replay, synthetic_trace, zipf_popularity


def test_shape_order_and_distinct_topk() -> None:
    tr = synthetic_trace(50, 3, 16, 4, 1.0, 0.5, 0)
    assert tr.dtype == np.int32 and tr.shape == (50 * 3 * 4, 2)
    per = tr.reshape(50, 3, 4, 2)
    assert np.all(per[..., 0] == np.arange(3)[None, :, None])
    assert all(len(set(row)) == 4 for row in per[..., 1].reshape(-1, 4).tolist())
    assert tr[:, 1].min() >= 0 and tr[:, 1].max() < 16


def test_seeded() -> None:
    a = synthetic_trace(30, 2, 16, 2, 1.0, 0.3, 5)
    assert np.array_equal(a, synthetic_trace(30, 2, 16, 2, 1.0, 0.3, 5))
    assert not np.array_equal(a, synthetic_trace(30, 2, 16, 2, 1.0, 0.3, 6))


def test_full_persistence_repeats_the_set() -> None:
    per = synthetic_trace(20, 2, 16, 4, 1.0, 1.0, 1).reshape(20, 2, 4, 2)[..., 1]
    sets = [[set(per[t, layer]) for layer in range(2)] for t in range(20)]
    assert all(sets[t] == sets[0] for t in range(20))


def test_skew_concentrates_and_persistence_helps_lru() -> None:
    def top_share(skew: float) -> float:
        tr = synthetic_trace(400, 1, 32, 2, skew, 0.0, 2)
        return np.bincount(tr[:, 1], minlength=32).max() / len(tr)

    assert top_share(2.0) > top_share(1.0) > top_share(0.0)
    hot = [replay(synthetic_trace(300, 4, 32, 4, 0.5, p, 3), 24).hit_rate for p in (0.0, 0.8)]
    assert hot[1] > hot[0] + 0.2
    assert zipf_popularity(8, 0.0) == pytest.approx(np.full(8, 1 / 8))


def test_repeats_previous_hand_worked() -> None:
    """Token 1 keeps 3 of token 0's (2, 3); token 2 keeps 5 and 3 of token 1's (3, 5)."""
    ids = np.array([[2, 3], [3, 5], [5, 3], [0, 1]])
    assert repeats_previous(ids).tolist() == [[False, False], [True, False], [True, True],
                                              [False, False]]
    with pytest.raises(ParamError, match="ids"):
        repeats_previous(np.zeros(4, int))


@pytest.mark.parametrize("persistence", [0.0, 0.5, 1.0])
def test_measured_persistence_is_at_least_the_knob(persistence: float) -> None:
    """Each kept expert repeats by construction; a fresh draw may repeat one too."""
    ids = synthetic_trace(400, 1, 32, 4, 1.0, persistence, 4)[:, 1].reshape(400, 4)
    measured = repeats_previous(ids)[1:].mean()
    assert measured >= persistence - 0.05
    if persistence == 1.0:
        assert measured == 1.0


@pytest.mark.parametrize("args,name", [
    ((0, 1, 8, 2, 1.0, 0.5, 0), "n_tokens"), ((5, 1, 8, 9, 1.0, 0.5, 0), "topk"),
    ((5, 1, 8, 2, -1.0, 0.5, 0), "skew"), ((5, 1, 8, 2, 1.0, 1.5, 0), "persistence"),
    ((5, 1, 8, 2, 1.0, 0.5, -3), "seed")])
def test_validation(args: tuple, name: str) -> None:
    with pytest.raises(ParamError, match=name):
        synthetic_trace(*args)
