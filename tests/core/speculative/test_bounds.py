"""What bounds the ring length: the flush schedule alone, and the gate's exponent range.

Pinned: ring_schedule applies the same rule as the tensor session (committed + gamma + 1 > L)
and conserves tokens; replay work per token grows with L while flushes per token fall; the
gate bound (L - 1)|lb| <= 80 gives L <= 17 at lb = -5, and fp32 exp really overflows just past
88.7 while 80 stays finite.
"""

from __future__ import annotations

import math

import pytest
import torch

from core.errors import ParamError
from core.speculative.bounds import (
    GATE_EXPONENT_LIMIT,
    max_ring_for_gate,
    needs_flush,
    ring_schedule,
)
from core.speculative.session import SessionParams, accepted_draws, run_session


def test_schedule_by_hand():
    """L = 6, gamma = 2 (windows of 3), n = 2, 0, 1, 2: commits 3, 1, 2, 3.

    step 0: c = 0 (0 + 3 <= 6); step 1: c = 3 (3 + 3 <= 6); step 2: c = 4, flush 4 -> 0;
    step 3: c = 2 (2 + 3 <= 6). Tokens = 9; run through the update: 0 + 3 + 4 + 2 = 9.
    """
    s = ring_schedule(6, 2, [2, 0, 1, 2])
    assert s.committed_before == (0, 3, 0, 2) and s.flushed == (0, 0, 4, 0)
    assert s.tokens == 9
    assert s.replayed == (0, 3, 4, 2) and s.replayed_per_token == pytest.approx(1.0)
    assert s.flushes_per_token == pytest.approx(1 / 9)
    assert needs_flush(4, 2, 6) and not needs_flush(3, 2, 6)


@pytest.mark.parametrize(("capacity", "draft_len", "a", "seed"),
                         [(12, 3, 0.7, 0), (4, 3, 0.9, 1), (9, 8, 0.5, 2), (5, 2, 0.0, 3)])
def test_schedule_equals_the_tensor_session(capacity, draft_len, a, seed):
    p = SessionParams(capacity=capacity, draft_len=draft_len, accept_rate=a, steps=16,
                      seed=seed)
    s = run_session(p)
    sched = ring_schedule(capacity, draft_len, accepted_draws(p))
    assert sched.committed_before == tuple(r.committed_before for r in s.steps)
    assert sched.flushed == tuple(r.flushed for r in s.steps)
    assert sched.replayed == tuple(r.replayed for r in s.steps)
    assert sched.tokens == s.num_committed


def test_replay_grows_and_flushes_thin_out_with_L():
    draws = [3] * 40  # every draft accepted: 4 tokens per step
    rows = [ring_schedule(L, 3, draws) for L in range(4, 33)]
    replayed = [r.replayed_per_token for r in rows]
    flushes = [r.flushes_per_token for r in rows]
    # L = 4: every step after the first folds the previous window (4 entries) in a flush
    assert replayed[0] == pytest.approx(39 * 4 / 160) and flushes[0] == pytest.approx(39 / 160)
    assert replayed == sorted(replayed) and flushes == sorted(flushes, reverse=True)


def test_gate_bound_from_first_principles():
    """(L - 1) * 5 <= 80 -> L <= 17; exp(80) is finite in fp32, exp above ln(FLT_MAX) is not."""
    assert max_ring_for_gate(-5.0) == 17 == math.floor(GATE_EXPONENT_LIMIT / 5) + 1
    assert (17 - 1) * 5 <= GATE_EXPONENT_LIMIT < (18 - 1) * 5
    f32 = torch.float32
    ln_max = math.log(torch.finfo(f32).max)  # 88.72
    assert GATE_EXPONENT_LIMIT < ln_max
    assert torch.isfinite(torch.exp(torch.tensor(GATE_EXPONENT_LIMIT, dtype=f32)))
    assert torch.isinf(torch.exp(torch.tensor(ln_max + 0.01, dtype=f32)))
    assert max_ring_for_gate(-1.0) == 81


@pytest.mark.parametrize(("call", "name"), [
    (lambda: ring_schedule(1, 1, [0]), "capacity"),
    (lambda: ring_schedule(4, 4, [0]), "draft_len"),
    (lambda: ring_schedule(6, 2, [3]), "accepted"),
    (lambda: max_ring_for_gate(0.0), "lower_bound"),
])
def test_bad_inputs(call, name):
    with pytest.raises(ParamError, match=name):
        call()
