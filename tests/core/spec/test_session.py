"""Speculative-decode session over the raw-input ring (core.spec.session).

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
from core.kda import kda_recurrent
from core.spec import rollback_bytes
from core.spec.session import SessionParams, SlotKind, batch_reference, run_session, step_seed
from tests.tolerance import EXACT, assert_close

CASES = [  # capacity, draft_len, accept_rate, steps, seed
    pytest.param(12, 3, 0.7, 20, 0, id="defaults"),
    pytest.param(4, 3, 0.9, 24, 1, id="tiny-ring-many-flushes"),
    pytest.param(6, 3, 0.7, 20, 0, id="wrapping-start"),
    pytest.param(8, 8, 1.0, 6, 2, id="all-accepted-full-window"),
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
        """Popping oldest-first up to this step's n-th snapshot yields the committed state.

        Checked against one batch recurrence over the tokens committed so far, never against a
        verdict the session computed itself.
        """
        s = _session(capacity, draft_len, accept_rate, steps, seed)
        c, done, restores = s.committed, 0, 0
        for r, restored in zip(s.steps, s.snap_restored, strict=True):
            done += r.n_accepted
            if r.n_accepted == 0:
                assert restored is None
                continue
            _, want = kda_recurrent(c.q[:, :done], c.k[:, :done], c.v[:, :done],
                                    c.g[:, :done], c.beta[:, :done],
                                    initial_state=s.initial_state)
            assert_close(want, restored, EXACT, f"restore after step {r.step}")
            restores += 1
        assert restores == sum(1 for r in s.steps if r.n_accepted)


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

    def test_ledger_by_hand(self):
        """capacity 4, gamma 2, every draft accepted, float64 toy (H=4, d_k=d_v=16, 8 B):
        raw entry = 4 x (4 x 16 x 8 + 8) = 2,080 B (q, k, v, g, beta); state = 4 x 16 x 16 x 8
        = 8,192 B. Step 0: c=0, writes 2 entries = 4,160, reads S = 8,192. Step 1: c=2, no flush
        (2 + 2 <= 4): writes 4,160, reads S + 2 entries = 12,352. Step 2: c=4, flush (4 + 2 > 4):
        writes 4,160 + the folded checkpoint 8,192 = 12,352, reads S + 4 entries = 16,512.
        The snapshot ring writes 2 states (16,384) and reads one (8,192) every step."""
        s = _session(4, 2, 1.0, 3, 0)
        raw = [(r.toy.raw_written, r.toy.raw_read) for r in s.steps]
        assert raw == [(4_160, 8_192), (4_160, 12_352), (12_352, 16_512)]
        assert all((r.toy.snap_written, r.toy.snap_read) == (16_384, 8_192) for r in s.steps)

    def test_k3_ledger_scales_the_cost_model_by_the_kda_layers(self):
        """K3 traffic is the cost model's per-layer bytes (reference §5) x 69 KDA layers."""
        s = _session(4, 2, 1.0, 3, 0)
        per_layer = rollback_bytes(96, 128, 128, 1)
        assert s.steps[0].k3.snap_written == 69 * 2 * per_layer.snapshot_bytes_per_step
        assert s.steps[0].k3.raw_written == 69 * 2 * per_layer.raw_bytes_per_step


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
            run_session(SessionParams(**params))
