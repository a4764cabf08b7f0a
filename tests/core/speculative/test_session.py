"""Speculative-decode session over the raw-input ring (core.speculative.session).

Pinned: the streaming path (checkpoint + ring replay, with flushes, commits and rollbacks) equals
one kda_recurrent over the committed tokens bit for bit in float64 and float32; the session is
a pure function of its seed; a window is the bonus token plus gamma drafts, so every step commits
n + 1 >= 1 entries; the flush rule is committed + gamma + 1 > capacity and a push never meets a
full ring; window rows follow push order across the wrap; the snapshot baseline's FIFO pops
restore the streaming state exactly; the K3 ledger is the cost model's bytes x 69 layers; bad
parameters raise ParamError naming them.
"""

from __future__ import annotations

import pytest
import torch

from core.dims import K3
from core.errors import ParamError
from core.kda import kda_recurrent
from core.speculative import layer_bytes, snapshot_outcome
from core.speculative.session import (
    SessionParams,
    SlotKind,
    batch_reference,
    run_session,
    step_seed,
)
from tests.tolerance import EXACT, assert_close

CASES = [  # capacity, draft_len, accept_rate, steps, seed
    pytest.param(12, 3, 0.7, 20, 0, id="defaults"),
    pytest.param(4, 3, 0.9, 24, 1, id="tiny-ring-many-flushes"),
    pytest.param(6, 2, 0.7, 20, 0, id="wrapping-start"),
    pytest.param(9, 8, 1.0, 6, 2, id="all-accepted-full-window"),
    pytest.param(5, 2, 0.0, 8, 3, id="none-accepted"),
]


def _session(capacity, draft_len, accept_rate, steps, seed, dtype="float64"):
    return run_session(SessionParams(capacity=capacity, draft_len=draft_len,
                                     accept_rate=accept_rate, steps=steps, seed=seed, dtype=dtype))


class TestEquivalence:
    @pytest.mark.parametrize("dtype", ["float64", "float32"])
    @pytest.mark.parametrize(("capacity", "draft_len", "accept_rate", "steps", "seed"), CASES)
    def test_streaming_equals_batch_bit_for_bit(self, capacity, draft_len, accept_rate, steps,
                                                seed, dtype):
        """Outputs and final state of checkpoint + ring replay equal one batch recurrence."""
        s = _session(capacity, draft_len, accept_rate, steps, seed, dtype)
        o_ref, s_ref = batch_reference(s)
        assert s.outputs.dtype == getattr(torch, dtype)
        assert_close(o_ref, s.outputs, EXACT, f"outputs ({dtype})")
        assert_close(s_ref, s.final_state, EXACT, f"final state ({dtype})")

    @pytest.mark.parametrize(("capacity", "draft_len", "accept_rate", "steps", "seed"), CASES)
    def test_snapshot_ring_restores_the_streaming_state(self, capacity, draft_len, accept_rate,
                                                         steps, seed):
        """Popping oldest-first up to this step's (n + 1)-th snapshot yields the committed state.

        Checked against one batch recurrence over the tokens committed so far, never against a
        verdict the session computed itself.
        """
        s = _session(capacity, draft_len, accept_rate, steps, seed)
        c, done = s.committed, 0
        for r, restored in zip(s.steps, s.snap_restored, strict=True):
            done += r.n_committed
            _, want = kda_recurrent(c.q[:, :done], c.k[:, :done], c.v[:, :done],
                                    c.g[:, :done], c.beta[:, :done],
                                    initial_state=s.initial_state)
            assert_close(want, restored, EXACT, f"restore after step {r.step}")


class TestDeterminism:
    def test_same_seed_same_session(self):
        a, b = _session(8, 3, 0.6, 16, 5), _session(8, 3, 0.6, 16, 5)
        assert a.steps == b.steps
        assert torch.equal(a.outputs, b.outputs) and torch.equal(a.final_state, b.final_state)

    def test_other_seed_other_session(self):
        a, b = _session(8, 3, 0.6, 16, 5), _session(8, 3, 0.6, 16, 6)
        assert [r.n_accepted for r in a.steps] != [r.n_accepted for r in b.steps]

    def test_step_seed_is_stable(self):
        """hashlib-derived, so it never depends on PYTHONHASHSEED."""
        assert step_seed(0, 0) == step_seed(0, 0) != step_seed(0, 1) != step_seed(1, 0)
        assert 0 <= step_seed(99, 47) < 2**63

    def test_dtype_changes_only_the_arithmetic(self):
        """The accept draws and ring timing do not depend on the compute dtype."""
        a, b = _session(8, 3, 0.6, 16, 5), _session(8, 3, 0.6, 16, 5, "float32")
        strip = [(r.flushed, r.start, r.n_accepted, r.slot_kind) for r in a.steps]
        assert strip == [(r.flushed, r.start, r.n_accepted, r.slot_kind) for r in b.steps]


class TestRing:
    @pytest.mark.parametrize(("capacity", "draft_len", "accept_rate", "steps", "seed"), CASES)
    def test_flush_rule_and_bounds(self, capacity, draft_len, accept_rate, steps, seed):
        """Flush exactly when committed + gamma + 1 > capacity; the window always fits."""
        s = _session(capacity, draft_len, accept_rate, steps, seed)
        committed = 0
        for r in s.steps:
            should = committed + draft_len + 1 > capacity
            assert (r.flushed > 0) == should, f"step {r.step}"
            if should:
                assert r.flushed == committed and 1 <= r.flushed <= capacity
                committed = 0
            assert r.committed_before == committed
            assert r.committed_before + draft_len + 1 <= capacity
            committed += r.n_committed
            assert 0 <= r.n_accepted <= draft_len and r.n_committed == r.n_accepted + 1

    @pytest.mark.parametrize(("capacity", "draft_len", "accept_rate", "steps", "seed"), CASES)
    def test_token_conservation(self, capacity, draft_len, accept_rate, steps, seed):
        """Committed == sum of (n + 1) == flushed + still in the ring; pushes == steps (γ + 1)."""
        s = _session(capacity, draft_len, accept_rate, steps, seed)
        n = sum(r.n_accepted + 1 for r in s.steps)
        assert s.num_committed == n == s.committed.draft_len
        last = s.steps[-1]
        assert n == sum(r.flushed for r in s.steps) + last.committed_before + last.n_committed
        kinds = [sum(k == kind for k in r.slot_kind) for r in s.steps for kind in SlotKind]
        assert sum(kinds[SlotKind.ACCEPTED::len(SlotKind)]) == n
        assert sum(kinds[SlotKind.ROLLED_BACK::len(SlotKind)]) == steps * (draft_len + 1) - n

    def test_accept_rate_extremes(self):
        """a = 1 commits the whole window; a = 0 still commits the bonus token every step."""
        assert all(r.n_committed == 5 for r in _session(8, 4, 1.0, 10, 0).steps)
        none = _session(8, 4, 0.0, 10, 0)
        assert all(r.n_accepted == 0 and r.n_committed == 1 for r in none.steps)
        assert none.num_committed == 10

    def test_window_rows_follow_push_order_across_the_wrap(self):
        """Row i of window() sits at slot (start + i) mod L and holds the i-th pushed token."""
        s = _session(6, 2, 0.7, 20, 0)
        wrapped = 0
        for r in s.steps:
            slots = [(r.start + i) % 6 for i in range(r.committed_before + 3)]
            tokens = [r.slot_token[x] for x in slots]
            assert tokens == list(range(tokens[0], tokens[0] + len(tokens)))
            wrapped += any(b < a for a, b in zip(slots, slots[1:], strict=False))
        lay = s.layout
        assert lay.committed_slots + lay.tentative_slots == tuple(slots)
        assert wrapped, "this case should exercise the wrap"

    def test_snapshot_overwrites_only_when_full(self):
        """Rejected snapshots stay unpopped until the next step pops them first; a full ring
        overwrites. L = 4, gamma = 2, a = 0: each step pushes 3 onto the 2 stale ones (the third
        push overwrites the oldest), then pops the surviving stale one and its bonus state."""
        s = _session(4, 2, 0.0, 4, 0)
        assert [r.snap_overwrites for r in s.steps] == [0, 1, 1, 1]
        assert [r.snap_pops for r in s.steps] == [1, 2, 2, 2]
        assert all(r.snap_held == 2 for r in s.steps)


class TestLedger:
    def test_ring_stores_what_it_pushes(self):
        """RawInputRing's own accounting: pushes x entry bytes (every field, compute dtype)."""
        s = _session(8, 3, 0.7, 12, 4, "float32")
        d = s.dims
        entry = (3 * d.dk + d.dv + 1) * d.H * 4  # q, k, g [H, K]; v [H, V]; beta [H]
        assert s.ring_entry_bytes == entry
        assert sum(r.snap_pushes for r in s.steps) * entry == s.ring_bytes_written

    def test_ledger_by_hand(self):
        """capacity 6, gamma 2 (windows of 3), every draft accepted, one K3 layer x 69:
        S = 6 MiB, R = 98,496 B, C = 73,728 B. Step 0: c = 0, writes 3 (R + C), reads nothing.
        Step 1: c = 3, no flush (3 + 3 <= 6): writes 3 (R + C), reads the 3 records it replays.
        Step 2: c = 6, flush (6 + 3 > 6): writes 3 (R + C) + S, reads the 6 records it folds.
        Snapshot ring: writes 3 (S + C) each step and never restores (all accepted)."""
        s = _session(6, 2, 1.0, 3, 0)
        S, R, C = 6 * 1024**2, 98_496, 73_728
        raw = [(r.k3.raw_written / 69, r.k3.raw_read / 69) for r in s.steps]
        assert raw == [(3 * (R + C), 0), (3 * (R + C), 3 * R), (3 * (R + C) + S, 6 * R)]
        assert [r.replayed for r in s.steps] == [0, 3, 6]
        assert all((r.k3.snap_written, r.k3.snap_read) == (69 * 3 * (S + C), 0) for r in s.steps)

    def test_k3_ledger_is_the_cost_model_times_the_kda_layers(self):
        s = _session(5, 2, 0.0, 3, 0)  # n = 0: the snapshot ring restores every step
        want = snapshot_outcome(layer_bytes(K3.kda), 2, 0)
        assert s.steps[0].k3.snap_written == 69 * want.written
        assert s.steps[0].k3.snap_read == 69 * want.read == 69 * 6 * 1024**2


class TestValidation:
    def test_capacity_below_the_window_names_both(self):
        with pytest.raises(ParamError, match="capacity.*draft_len"):
            _session(4, 4, 0.5, 4, 0)

    @pytest.mark.parametrize(("kwargs", "name"), [
        ({"capacity": 0}, "capacity"), ({"draft_len": 0}, "draft_len"),
        ({"accept_rate": 1.5}, "accept_rate"), ({"accept_rate": -0.1}, "accept_rate"),
        ({"steps": 0}, "steps"), ({"seed": -1}, "seed"), ({"seed": 1.5}, "seed"),
        ({"dtype": "bfloat16"}, "dtype"), ({"capacity": True}, "capacity"),
    ])
    def test_bad_parameters(self, kwargs, name):
        params = {"capacity": 8, "draft_len": 3, "accept_rate": 0.5, "steps": 4, "seed": 0,
                  "dtype": "float64", **kwargs}
        with pytest.raises(ParamError, match=name):
            run_session(SessionParams(**params))
