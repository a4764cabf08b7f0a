"""Slot table: per-slot state of the arena, victim choice and leases.

`key_of[slot]` is the state: a key >= 0 (READY), EMPTY (-1) or INFLIGHT (-2).
`slot_of[key]` is the slot of a READY key or -1. The two always agree for READY slots.
"""

from __future__ import annotations

EMPTY = -1
INFLIGHT = -2

# Slot origins: a serial demand miss, a prefetch batch, warm(), and a demand batch (get_many of
# experts the layer needs now: each is a demand miss whose read was batched, never a prefetch).
DEMAND, PREFETCH, WARM, DEMAND_BATCH = "demand", "prefetch", "warm", "demand_batch"
AHEAD = (PREFETCH, WARM)  # loaded ahead of demand: a first get is a prefetched hit


class SlotTable:
    """Explicit per-slot state; the cache drives every transition."""

    def __init__(self, n_slots: int, n_keys: int) -> None:
        self.n_slots = n_slots
        self.key_of = [EMPTY] * n_slots
        self.slot_of = [-1] * n_keys
        self.pending_key = [-1] * n_slots  # key being read into an INFLIGHT slot
        self.used_at = [0] * n_slots
        self.clock = 0
        self.pinned = [False] * n_slots
        self.leases = [0] * n_slots  # 1 while a handed-out view of the slot is leased
        self.generation = [0] * n_slots
        self.origin: list[str | None] = [None] * n_slots
        self.consumed = [False] * n_slots
        self.window = [0] * n_slots  # stats window the slot was loaded in
        self.payload = [0] * n_slots
        self.device = [0] * n_slots
        self.views: list[object] = [None] * n_slots

    def stamp(self, s: int) -> None:
        self.clock += 1
        self.used_at[s] = self.clock

    def state(self, s: int) -> str:
        k = self.key_of[s]
        return "READY" if k >= 0 else ("EMPTY" if k == EMPTY else "INFLIGHT")

    def pick_victim(self, protected: frozenset[int] | set[int] = frozenset()) -> int:
        """First EMPTY slot, else the least recently used evictable one, else -1.

        INFLIGHT, pinned, leased and protected slots are never victims. EMPTY is checked
        before the pin test, as upstream does (an EMPTY slot holds nothing to protect).
        """
        best, best_t = -1, 0
        key_of, pinned, leases, used_at = self.key_of, self.pinned, self.leases, self.used_at
        for s in range(self.n_slots):
            k = key_of[s]
            if k == INFLIGHT:
                continue
            if k == EMPTY:
                return s
            if pinned[s] or leases[s] or s in protected:
                continue
            if best < 0 or used_at[s] < best_t:
                best, best_t = s, used_at[s]
        return best

    def take(self, s: int) -> None:
        """Reserve slot s (after its owner was evicted): INFLIGHT, new generation."""
        self.key_of[s] = INFLIGHT
        self.generation[s] += 1
        self.origin[s] = None
        self.consumed[s] = False
        self.views[s] = None

    def release(self, s: int) -> None:
        """A reservation whose read failed goes back to EMPTY."""
        self.key_of[s] = EMPTY
        self.pending_key[s] = -1
        self.payload[s] = self.device[s] = 0

    def unmap(self, s: int) -> int:
        """Drop the READY owner of slot s from the key map; returns the old key."""
        old = self.key_of[s]
        self.slot_of[old] = -1
        self.key_of[s] = EMPTY
        self.pinned[s] = False
        return old

    def publish(self, s: int, key: int, origin: str, consumed: bool, window: int) -> None:
        self.key_of[s] = key
        self.slot_of[key] = s
        self.pending_key[s] = -1
        self.origin[s] = origin
        self.consumed[s] = consumed
        self.window[s] = window

    def count(self, state: str) -> int:
        return sum(1 for s in range(self.n_slots) if self.state(s) == state)

    def pending_prefetches(self) -> int:
        """READY slots loaded ahead of demand and not yet consumed."""
        return sum(
            1
            for s in range(self.n_slots)
            if self.key_of[s] >= 0 and self.origin[s] in AHEAD and not self.consumed[s]
        )


class Leases:
    """Slots of views handed out since the last `clear()` (begin_layer): none is evictable.

    A lease is held until `clear()`, however many gets follow, so a view handed out in a layer
    stays valid until the next begin_layer. Leases are per slot (a second get of a leased slot
    adds nothing). They can cover at most every slot: once every unpinned slot is leased, a
    miss finds no victim and raises SlotsExhausted (a counted drop) without touching any slot,
    and begin_layer() recovers. With n_slots >= topk + 1 and at most n_slots - topk - 1 pins
    (fixed mode), a layer's topk gets always fit. `enabled=False` (compat) leases nothing.
    """

    def __init__(self, table: SlotTable, enabled: bool) -> None:
        self.table = table
        self.enabled = enabled
        self._held: list[int] = []

    def lease(self, s: int) -> None:
        if self.enabled and not self.table.leases[s]:
            self.table.leases[s] = 1
            self._held.append(s)

    def clear(self) -> None:
        for s in self._held:
            self.table.leases[s] = 0
        self._held.clear()
