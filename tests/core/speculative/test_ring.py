"""Replay rings: RawInputRing's commit/rollback/flush and the snapshot baseline's FIFO overwrite.

Pinned: rollback is a pointer move that drops only the tentative tail; iteration runs oldest ->
newest across the wrap; pushing T tokens (with commits, rejected drafts and flushes) then
flushing equals kda_recurrent over the committed tokens bit for bit in float64; a full ring
refuses a push until flushed. SnapshotRing drops the oldest when full, and full -> pop -> push
-> pop still returns the oldest (the naive cursor ring below returns the newest once wrapped);
copy_from is a deep copy.
"""

from __future__ import annotations

import pytest
import torch

from core.errors import ParamError
from core.kda import kda_recurrent
from core.speculative import DraftProjections, verify_and_replay
from core.speculative.ring import RawInputRing, RingFullError, SnapshotRing
from tests.tolerance import EXACT, assert_close

B, H, DK, DV = 2, 3, 8, 5


def _tokens(T, seed=0):
    return DraftProjections.from_random(B, T, H, DK, DV, torch.float64, seed=seed)


def _token(d, t):
    return d.q[:, t], d.k[:, t], d.v[:, t], d.g[:, t], d.beta[:, t]


def _state():
    gen = torch.Generator().manual_seed(9)
    return torch.randn(B, H, DK, DV, generator=gen, dtype=torch.float64)  # [B, H, K, V]


def _ring(capacity=4):
    return RawInputRing(capacity, B, H, DK, DV, torch.float64)


class TestRawInputRing:
    def test_commit_keeps_a_prefix_and_rollback_drops_the_tail(self):
        d, ring = _tokens(6), _ring(8)
        for t in range(3):
            ring.push(*_token(d, t))
        ring.commit(2)
        assert (ring.num_committed, ring.num_tentative) == (2, 0)
        for t in range(3, 5):
            ring.push(*_token(d, t))
        ring.rollback()
        assert (ring.num_committed, ring.num_tentative) == (2, 0)
        assert_close(d.k[:, :2], ring.window().k, EXACT, "committed window")
        with pytest.raises(ParamError, match="n"):
            ring.commit(1)

    def test_wrap_around_order(self):
        """Capacity 4: after a flush of 3, four pushes occupy slots 3, 0, 1, 2 in push order."""
        d, ring = _tokens(7), _ring(4)
        for t in range(3):
            ring.push(*_token(d, t))
        ring.commit(3)
        ring.flush(_state())
        for t in range(3, 7):
            ring.push(*_token(d, t))
        ring.commit(4)
        assert ring.snapshot().committed_slots == (3, 0, 1, 2) and ring.is_full
        for i, entry in enumerate(ring):
            assert_close(d.v[:, 3 + i], entry.v, EXACT, f"entry {i}")
        assert_close(d.g[:, 3:], ring.window().g, EXACT, "window in push order")

    def test_stream_equals_batch(self):
        """Drafts of 3 with 0..3 accepted, flushing when full == kda_recurrent over the accepted."""
        d, ring, S0 = _tokens(40, seed=1), _ring(5), _state()
        state, accepted, t = S0, [], 0
        for n in [2, 0, 3, 1, 3, 2, 0, 1, 3]:
            if ring.num_committed + 3 > ring.capacity:
                state = ring.flush(state)
            for i in range(3):
                ring.push(*_token(d, t + i))
            ring.commit(n)
            accepted += range(t, t + n)
            t += 3
        state = ring.flush(state)
        idx = torch.tensor(accepted)
        kept = [x.index_select(1, idx) for x in (d.q, d.k, d.v, d.g, d.beta)]
        _, want = kda_recurrent(*kept, initial_state=S0)
        assert_close(want, state, EXACT, "streamed state")

    def test_flush_equals_verify_and_replay(self):
        """The ring's window replays to the same state as its flush."""
        d, ring, S0 = _tokens(4, seed=2), _ring(4), _state()
        for t in range(4):
            ring.push(*_token(d, t))
        ring.commit(4)
        want, _ = verify_and_replay(S0, ring.window(), 4)
        assert_close(want, ring.flush(S0), EXACT, "flush vs replay")
        assert ring.num_committed == 0

    def test_full_ring_refuses_until_flushed(self):
        d, ring = _tokens(5), _ring(2)
        ring.push(*_token(d, 0))
        ring.push(*_token(d, 1))
        with pytest.raises(RingFullError, match="flush"):
            ring.push(*_token(d, 2))
        ring.commit(1)
        ring.flush(_state())
        ring.push(*_token(d, 2))
        assert (ring.num_committed, ring.num_tentative) == (0, 1)

    def test_flush_keeps_the_tentative_tail(self):
        d, ring = _tokens(3), _ring(4)
        for t in range(3):
            ring.push(*_token(d, t))
        ring.commit(2)
        ring.push(*_token(d, 2))
        ring.flush(_state())
        assert ring.num_tentative == 1
        assert_close(d.q[:, 2:3], ring.window(tentative=True).q, EXACT, "tail")

    def test_byte_accounting(self):
        """Entry = B H (3 dk + dv + 1) elements; written counts rejected pushes too."""
        d, ring = _tokens(3), _ring(4)
        entry = B * H * (3 * DK + DV + 1) * 8
        assert ring.entry_bytes == entry
        for t in range(3):
            ring.push(*_token(d, t))
        ring.commit(1)
        snap = ring.snapshot()
        assert (snap.bytes_held, snap.bytes_written) == (entry, 3 * entry)

    def test_bad_inputs(self):
        with pytest.raises(ParamError, match="capacity"):
            RawInputRing(0, B, H, DK, DV)
        d, ring = _tokens(1), _ring()
        with pytest.raises(ParamError, match="q_t"):
            ring.push(d.q[:, 0, :2], d.k[:, 0, :2], d.v[:, 0, :2], d.g[:, 0, :2], d.beta[:, 0, :2])
        with pytest.raises(ParamError, match="q_t"):
            ring.push(*(x.float() for x in _token(d, 0)))
        with pytest.raises(ParamError, match="state"):
            ring.flush(torch.zeros(B, H, DV, DK, dtype=torch.float64))


class NaiveCursorRing:
    """Oldest-entry cursor plus count; a push into a non-full ring writes at `count`.

    Right until the ring has wrapped: then the slot at `count` is live, not free.
    """

    def __init__(self, capacity):
        self.slots, self.oldest, self.count = [None] * capacity, 0, 0

    def push(self, x):
        if self.count == len(self.slots):
            self.slots[self.oldest] = x
            self.oldest = (self.oldest + 1) % len(self.slots)
        else:
            self.slots[self.count] = x
            self.count += 1

    def pop(self):
        x = self.slots[self.oldest]
        self.oldest = (self.oldest + 1) % len(self.slots)
        self.count -= 1
        return x


class TestSnapshotRing:
    def test_fifo_overwrite(self):
        ring = SnapshotRing(3)
        overwrote = [ring.push(torch.tensor(float(i))) for i in range(5)]
        assert overwrote == [False, False, False, True, True] and ring.num_overwritten == 2
        assert [float(x) for x in ring] == [2.0, 3.0, 4.0] and ring.is_full

    def test_pop_after_refill_returns_the_oldest(self):
        """Wrapped and full -> pop -> push -> pop returns the oldest (2), not the newest (4)."""
        ring, naive = SnapshotRing(3), NaiveCursorRing(3)
        for r in (ring, naive):
            for i in range(4):
                r.push(torch.tensor(float(i)))
            assert float(r.pop()) == 1.0
            r.push(torch.tensor(4.0))
        assert float(ring.pop()) == 2.0
        assert float(naive.pop()) == 4.0
        assert [float(x) for x in ring] == [3.0, 4.0]

    def test_stores_clones_and_copy_from_is_deep(self):
        ring, state = SnapshotRing(2), torch.zeros(2, 2)
        ring.push(state)
        state.add_(5.0)
        other = SnapshotRing(2)
        other.copy_from(ring)
        next(iter(ring)).add_(1.0)
        ring.push(torch.ones(2, 2))
        assert len(other) == 1 and float(next(iter(other)).sum()) == 0.0
        other.pop()
        assert len(ring) == 2

    def test_bad_inputs(self):
        with pytest.raises(ParamError, match="capacity"):
            SnapshotRing(0)
        with pytest.raises(ParamError, match="capacity"):
            SnapshotRing(2).copy_from(SnapshotRing(3))
        with pytest.raises(IndexError):
            SnapshotRing(1).pop()
