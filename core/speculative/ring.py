"""Rings for speculative decoding: ReplaySSM's raw-input ring and the snapshot baseline.

`RawInputRing` keeps the raw inputs (q, k, v, g, beta) of recent positions next to one
checkpoint state: pushes are tentative until verification commits a prefix, a rejection is a
pointer move, and `flush` folds the committed entries into the checkpoint with `kda_step`.
`SnapshotRing` is the baseline that stores a full state per position, FIFO-overwriting the
oldest when full.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

import torch

from core.errors import ParamError, check_int
from core.kda import check_tokens, kda_step
from core.speculative.drafts import DraftProjections

FIELDS = ("q", "k", "v", "g", "beta")


class RingFullError(RuntimeError):
    """A push into a full RawInputRing: the caller must flush (or commit/roll back) first."""


class RingEntry(NamedTuple):
    """One position's raw inputs: q, k, g [B, H, K]; v [B, H, V]; beta [B, H]."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    g: torch.Tensor
    beta: torch.Tensor


@dataclass(frozen=True, slots=True, kw_only=True)
class RingSnapshot:
    """Read-only view of a RawInputRing's bookkeeping, for figures."""

    capacity: int
    start: int
    num_committed: int
    num_tentative: int
    committed_slots: tuple[int, ...]
    tentative_slots: tuple[int, ...]
    bytes_held: int
    bytes_written: int


class RawInputRing:
    """Preallocated ring of raw KDA inputs: committed entries, then a tentative tail.

    Fields are stored slot-major: q, k, g [capacity, B, H, K]; v [capacity, B, H, V];
    beta [capacity, B, H].
    """

    def __init__(
        self, capacity: int, B: int, H: int, dk: int, dv: int, dtype: torch.dtype = torch.float32
    ) -> None:
        self.capacity = check_int("capacity", capacity, 1, 1 << 16)
        self.B, self.H = check_int("B", B, 1, 4096), check_int("H", H, 1, 4096)
        self.dk, self.dv = check_int("dk", dk, 1, 4096), check_int("dv", dv, 1, 4096)
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise ParamError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
        self.dtype = dtype
        shapes = {"q": (dk,), "k": (dk,), "v": (dv,), "g": (dk,), "beta": ()}
        self._buf = {f: torch.zeros(capacity, B, H, *shapes[f], dtype=dtype) for f in FIELDS}
        self.entry_bytes = sum(t[0].numel() * t.element_size() for t in self._buf.values())
        self.start = 0
        self.num_committed = 0
        self.num_tentative = 0
        self.bytes_written = 0

    @property
    def is_full(self) -> bool:
        """No free slot: flush before the next push."""
        return self.num_committed + self.num_tentative == self.capacity

    @property
    def bytes_held(self) -> int:
        """Bytes of live entries, committed and tentative."""
        return (self.num_committed + self.num_tentative) * self.entry_bytes

    def _slots(self, first: int, count: int) -> list[int]:
        return [(self.start + first + i) % self.capacity for i in range(count)]

    def _live(self, tentative: bool) -> list[int]:
        if tentative:
            return self._slots(self.num_committed, self.num_tentative)
        return self._slots(0, self.num_committed)

    def push(
        self,
        q_t: torch.Tensor,
        k_t: torch.Tensor,
        v_t: torch.Tensor,
        g_t: torch.Tensor,
        beta_t: torch.Tensor,
    ) -> None:
        """Append a tentative entry: q_t, k_t, g_t [B, H, K]; v_t [B, H, V]; beta_t [B, H]."""
        shape = check_tokens(q_t, k_t, v_t, g_t, beta_t, None, step=True)
        if shape != (self.B, self.H, self.dk, self.dv):
            raise ParamError(
                f"q_t/v_t must be [B, H, K] / [B, H, V] = {(self.B, self.H, self.dk)} / "
                f"{(self.B, self.H, self.dv)}, got shape (B, H, K, V) = {shape}"
            )
        if q_t.dtype != self.dtype:
            raise ParamError(f"q_t must have the ring's dtype {self.dtype}, got {q_t.dtype}")
        if self.is_full:
            raise RingFullError(f"RawInputRing is full ({self.capacity} entries): flush first")
        slot = self._slots(self.num_committed + self.num_tentative, 1)[0]
        for name, x in zip(FIELDS, (q_t, k_t, v_t, g_t, beta_t), strict=True):
            self._buf[name][slot].copy_(x)
        self.num_tentative += 1
        self.bytes_written += self.entry_bytes

    def commit(self, n: int) -> None:
        """Keep the first n tentative entries (n in [0, num_tentative]) and drop the rest."""
        n = check_int("n", n, 0, self.num_tentative)
        self.num_committed += n
        self.num_tentative = 0

    def rollback(self) -> None:
        """Drop the whole tentative tail: a pointer move, no data is touched."""
        self.num_tentative = 0

    def entries(self, tentative: bool = False) -> Iterator[RingEntry]:
        """Committed (or tentative) entries oldest -> newest across the wrap, as views."""
        for slot in self._live(tentative):
            yield RingEntry(**{f: self._buf[f][slot] for f in FIELDS})

    def __iter__(self) -> Iterator[RingEntry]:
        return self.entries()

    def window(self, tentative: bool = False) -> DraftProjections:
        """Committed (or tentative) entries as DraftProjections [B, D, H, *], row i = i-th push."""
        index = torch.tensor(self._live(tentative), dtype=torch.long)
        return DraftProjections(**{f: self._buf[f].index_select(0, index).movedim(0, 1)
                                   for f in FIELDS})

    def flush(self, state: torch.Tensor, scale: float | None = None) -> torch.Tensor:
        """Fold the committed entries into state [B, H, K, V] with kda_step; empty them.

        The input state is not mutated; the tentative tail (if any) stays, now at the start.
        """
        expected = (self.B, self.H, self.dk, self.dv)
        if not isinstance(state, torch.Tensor) or tuple(state.shape) != expected:
            got = tuple(state.shape) if isinstance(state, torch.Tensor) else type(state).__name__
            raise ParamError(f"state must be a tensor [B, H, K, V] = {expected}, got {got}")
        if self.num_committed == 0:
            return state.clone()
        for entry in self.entries():
            _, state = kda_step(*entry, state, scale)
        self.start = (self.start + self.num_committed) % self.capacity
        self.num_committed = 0
        return state

    def snapshot(self) -> RingSnapshot:
        """Bookkeeping for figures; holds no tensors."""
        return RingSnapshot(capacity=self.capacity, start=self.start,
                            num_committed=self.num_committed, num_tentative=self.num_tentative,
                            committed_slots=tuple(self._live(False)),
                            tentative_slots=tuple(self._live(True)), bytes_held=self.bytes_held,
                            bytes_written=self.bytes_written)


class SnapshotRing:
    """The snapshot baseline: up to `capacity` cloned states, FIFO overwrite when full.

    Stored oldest -> newest; `push` on a full ring drops the oldest, `pop` removes the oldest.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = check_int("capacity", capacity, 1, 1 << 16)
        self._slots: list[torch.Tensor | None] = [None] * self.capacity
        self._head = 0
        self._count = 0
        self.num_overwritten = 0

    def __len__(self) -> int:
        return self._count

    @property
    def is_full(self) -> bool:
        """The next push overwrites the oldest snapshot."""
        return self._count == self.capacity

    @property
    def bytes_held(self) -> int:
        """Bytes of the stored snapshots."""
        return sum(x.numel() * x.element_size() for x in self)

    def push(self, state: torch.Tensor) -> bool:
        """Store a clone of state; return True when that overwrote the oldest snapshot."""
        if not isinstance(state, torch.Tensor):
            raise ParamError(f"state must be a tensor, got {type(state).__name__}")
        if self.is_full:
            self._slots[self._head] = state.detach().clone()
            self._head = (self._head + 1) % self.capacity
            self.num_overwritten += 1
            return True
        self._slots[(self._head + self._count) % self.capacity] = state.detach().clone()
        self._count += 1
        return False

    def pop(self) -> torch.Tensor:
        """Remove and return the oldest snapshot; IndexError when empty."""
        if self._count == 0:
            raise IndexError("pop from an empty SnapshotRing")
        oldest = self._slots[self._head]
        self._slots[self._head] = None
        self._head = (self._head + 1) % self.capacity
        self._count -= 1
        assert oldest is not None
        return oldest

    def __iter__(self) -> Iterator[torch.Tensor]:
        for i in range(self._count):
            slot = self._slots[(self._head + i) % self.capacity]
            assert slot is not None
            yield slot

    def copy_from(self, other: SnapshotRing) -> None:
        """Become a deep copy of other (same capacity): later mutations never cross over."""
        if not isinstance(other, SnapshotRing):
            raise ParamError(f"other must be a SnapshotRing, got {type(other).__name__}")
        if other.capacity != self.capacity:
            raise ParamError(f"other.capacity must equal {self.capacity}, got {other.capacity}")
        self._slots = [None if x is None else x.clone() for x in other._slots]
        self._head, self._count = other._head, other._count
        self.num_overwritten = other.num_overwritten
