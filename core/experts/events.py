"""The cache's bounded event log, request trace and read-only snapshots (what figures draw)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from itertools import islice

import numpy as np

# Event ops: reserve, read_done, read_failed, publish, evict, waste, hit_resident,
# hit_prefetched, miss, drop, warm, pin, unpin, reset, lease_clear. A "miss" whose origin is
# demand_batch is the first get of a member of a demand batch (get_many(..., demand=True)).


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    seq: int
    op: str
    layer: int
    expert: int
    slot: int
    origin: str | None


class EventLog:
    """The last `capacity` events; `seq` increases by one per event, forever."""

    def __init__(self, capacity: int = 4096) -> None:
        self._events: deque[Event] = deque(maxlen=capacity)
        self.seq = 0

    def add(self, op: str, layer: int = -1, expert: int = -1, slot: int = -1,
            origin: str | None = None) -> None:
        self.seq += 1
        self._events.append(Event(seq=self.seq, op=op, layer=layer, expert=expert, slot=slot,
                                  origin=origin))

    def since(self, seq: int = 0) -> tuple[Event, ...]:
        """Events with a sequence number above `seq` that are still in the log.

        Sequence numbers are consecutive, so those are the newest `self.seq - seq` entries:
        read from the right end, the cost is the answer's length, not the log's."""
        n = min(len(self._events), max(0, self.seq - seq))
        return tuple(reversed(tuple(islice(reversed(self._events), n))))

    def since_reference(self, seq: int = 0) -> tuple[Event, ...]:
        """The slow twin of `since`: a scan of the whole log."""
        return tuple(e for e in self._events if e.seq > seq)


class TraceBuffer:
    """(layer, expert) int32 pairs, recorded at each in-range get; stops at `limit` pairs."""

    def __init__(self, limit: int = 1 << 22) -> None:
        self.limit = limit
        self._buf = np.empty((1024, 2), np.int32)
        self.n = 0
        self.dropped = 0

    def append(self, layer: int, expert: int) -> None:
        if self.n >= self.limit:
            self.dropped += 1
            return
        if self.n == len(self._buf):
            grown = np.empty((min(2 * len(self._buf), self.limit), 2), np.int32)
            grown[: self.n] = self._buf
            self._buf = grown
        self._buf[self.n] = (layer, expert)
        self.n += 1

    def array(self) -> np.ndarray:
        return self._buf[: self.n].copy()  # (n, 2) int32


@dataclass(frozen=True, slots=True, kw_only=True)
class SlotInfo:
    slot: int
    state: str  # EMPTY | INFLIGHT | READY
    layer: int  # -1 when EMPTY
    expert: int
    pinned: bool
    origin: str | None  # demand | prefetch | warm | demand_batch
    consumed: bool
    leased: bool
    used_at: int
    generation: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheSnapshot:
    """A frozen picture of the slot map after event `seq`."""

    n_slots: int
    slot_bytes: int
    compat: str | None
    window: int
    seq: int
    slots: tuple[SlotInfo, ...]

    def resident(self) -> tuple[tuple[int, int], ...]:
        return tuple((s.layer, s.expert) for s in self.slots if s.state == "READY")
