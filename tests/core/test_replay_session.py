"""Speculative-decode session over the raw-input ring (core.replay_session).

Pinned: the streaming path (checkpoint + ring replay, with flushes, commits and rollbacks) equals
one kda_recurrent over the committed tokens bit for bit in float64 and float32; the session is
a pure function of its seed; the flush rule is committed + draft_len > capacity and a push never
meets a full ring; committed tokens == sum of n; window rows follow push order across the wrap;
the snapshot baseline's FIFO pops restore the streaming state exactly; the ledgers equal the
ring's own byte accounting; bad parameters raise ParamError naming them.
"""

from __future__ import annotations

import pytest
import torch

from core.errors import ParamError
from core.replay_session import SlotKind, batch_reference, simulate, step_seed
from tests.tolerance import EXACT, assert_close

CASES = [  # capacity, draft_len, accept_rate, steps, seed
    pytest.param(12, 3, 0.7, 20, 0, id="defaults"),
    pytest.param(4, 3, 0.9, 24, 1, id="tiny-ring-many-flushes"),
    pytest.param(6, 3, 0.7, 20, 0, id="wrapping-start"),
    pytest.param(8, 8, 1.0, 6, 2, id="all-accepted-full-window"),
    pytest.param(5, 2, 0.0, 8, 3, id="none-accepted"),
]


def _session(capacity, draft_len, accept_rate, steps, seed, dtype="float64"):
    return simulate(capacity, draft_len, accept_rate, steps, seed, dtype)


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
        """Popping oldest-first up to this step's n-th snapshot yields the committed state."""
        s = _session(capacity, draft_len, accept_rate, steps, seed)
        assert all(r.snap_restore_exact for r in s.steps)


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
        """Flush exactly when committed + draft_len > capacity; no flush exceeds the capacity."""
        s = _session(capacity, draft_len, accept_rate, steps, seed)
        committed = 0
        for r in s.steps:
            should = committed + draft_len > capacity
            assert (r.flushed > 0) == should, f"step {r.step}"
            if should:
                assert r.flushed == committed and 1 <= r.flushed <= capacity
                committed = 0
            assert r.committed_before == committed
            assert r.committed_before + draft_len <= capacity  # the window always fits
            committed += r.n_accepted
            assert 0 <= r.n_accepted <= draft_len

    @pytest.mark.parametrize(("capacity", "draft_len", "accept_rate", "steps", "seed"), CASES)
    def test_token_conservation(self, capacity, draft_len, accept_rate, steps, seed):
        """Committed tokens == sum of n == flushed + still in the ring; pushes == steps * γ."""
        s = _session(capacity, draft_len, accept_rate, steps, seed)
        n = sum(r.n_accepted for r in s.steps)
        assert s.num_committed == n == s.committed.draft_len
        last = s.steps[-1]
        assert n == sum(r.flushed for r in s.steps) + last.committed_before + last.n_accepted
        kinds = [sum(k == kind for k in r.slot_kind) for r in s.steps for kind in SlotKind]
        assert sum(kinds[SlotKind.ACCEPTED::len(SlotKind)]) == n
        assert sum(kinds[SlotKind.ROLLED_BACK::len(SlotKind)]) == steps * draft_len - n

    def test_accept_rate_extremes(self):
        assert all(r.n_accepted == 4 for r in _session(8, 4, 1.0, 10, 0).steps)
        assert all(r.n_accepted == 0 for r in _session(8, 4, 0.0, 10, 0).steps)

    def test_window_rows_follow_push_order_across_the_wrap(self):
        """Row i of window() sits at slot (start + i) mod L and holds the i-th pushed token."""
        s = _session(6, 3, 0.7, 20, 0)
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
        """A run of rejections leaves unpopped snapshots; a push into a full ring overwrites."""
        s = _session(4, 2, 0.0, 6, 0)
        assert [r.snap_overwrites for r in s.steps] == [0, 0, 2, 2, 2, 2]
        assert all(r.snap_pops == 0 and r.snap_held == 4 for r in s.steps[1:])


class TestLedger:
    def test_toy_ledger_matches_the_ring_accounting(self):
        """Toy units are what RawInputRing stores: pushes * entry bytes == ring.bytes_written."""
        s = _session(8, 3, 0.7, 12, 4, "float32")
        pushes = sum(r.snap_pushes for r in s.steps)
        assert pushes * s.toy_units.raw_bytes_per_step == s.ring_bytes_written

    def test_ledger_formulas(self):
        s = _session(6, 3, 0.7, 20, 0)
        for u, layers, led in ((s.toy_units, 1, "toy"), (s.k3_units, 69, "k3")):
            state, raw = u.snapshot_bytes_per_step, u.raw_bytes_per_step
            for r in s.steps:
                t = getattr(r, led)
                c = r.flushed or r.committed_before
                assert t.raw_written == layers * (3 * raw + (state if r.flushed else 0))
                assert t.raw_read == layers * (state + c * raw)
                assert (t.snap_written, t.snap_read) == (layers * 3 * state, layers * state)
        assert (s.k3_units.snapshot_bytes_per_step, s.k3_units.raw_bytes_per_step) == (
            96 * 128 * 128 * 4, 96 * (128 * 2 + 128 * 2 + 128 * 4 + 2))


class TestValidation:
    def test_capacity_below_draft_len_names_both(self):
        with pytest.raises(ParamError, match="capacity.*draft_len"):
            _session(3, 4, 0.5, 4, 0)

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
            simulate(**params)
