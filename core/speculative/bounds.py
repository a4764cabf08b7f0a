"""What bounds a raw-input ring's length L: the flush schedule, replay work and the gate's range.

Flush rule (vLLM #49847, reference §6): a verify step pushes a window of gamma + 1 entries (the
pending bonus token plus gamma drafts), so it flushes first when committed + gamma + 1 > L.
Every step runs its c committed entries through the state update before the window (it
rebuilds the live state from the checkpoint, or folds them into it on a flush): c updates of
H dk dv each, so replay work grows with L, while a small L flushes (writes a whole state)
often. `needs_flush` is the rule, used by the session (with tensors) and by
`ring_schedule` (bookkeeping only, cheap enough to sweep L for a figure).

Gate range: a kernel that replays the ring in parallel forms decay factors exp(G_i - G_j)
from gates summed over up to L - 1 steps, each in [lb, 0], so it needs (L - 1) |lb| <= 80
(SGLang #37739) for fp32, whose exp overflows just above 88.7. At K3's lb = -5 that is L <= 17.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from core.dims import K3
from core.errors import check_float, check_int

GATE_EXPONENT_LIMIT = 80.0  # largest summed |gate| a parallel fp32 replay may exponentiate
K3_GATE_LOWER_BOUND = K3.gate_lower_bound  # reference §1 (core.dims, the one K3 source)


def needs_flush(committed: int, draft_len: int, capacity: int) -> bool:
    """True when the next window (gamma + 1 entries) would not fit behind the committed ones."""
    return committed + draft_len + 1 > capacity


@dataclass(frozen=True, slots=True)
class Schedule:
    """The ring's bookkeeping over a run of verify steps (no tensors)."""

    committed_before: tuple[int, ...]  # committed entries in the ring after any flush
    flushed: tuple[int, ...]  # entries folded by the flush before each step; 0 = no flush
    replayed: tuple[int, ...]  # entries run through the state update (folded or replayed)
    tokens: int  # committed tokens: the bonus plus the accepted drafts of every step

    @property
    def replayed_per_token(self) -> float:
        return sum(self.replayed) / self.tokens

    @property
    def flushes_per_token(self) -> float:
        return sum(1 for f in self.flushed if f) / self.tokens


def ring_schedule(capacity: int, draft_len: int, accepted: Sequence[int]) -> Schedule:
    """Apply the flush rule to a run of accepted-draft counts (n per step, 0 <= n <= gamma)."""
    capacity = check_int("capacity", capacity, 2, 1 << 16)
    draft_len = check_int("draft_len", draft_len, 1, capacity - 1)
    c, before, flushed, replayed = 0, [], [], []
    for n in accepted:
        n = check_int("accepted", n, 0, draft_len)
        f = c if needs_flush(c, draft_len, capacity) else 0
        replayed.append(c)
        c -= f
        before.append(c)
        flushed.append(f)
        c += n + 1
    return Schedule(tuple(before), tuple(flushed), tuple(replayed), sum(accepted) + len(before))


def max_ring_for_gate(lower_bound: float = K3_GATE_LOWER_BOUND,
                      limit: float = GATE_EXPONENT_LIMIT) -> int:
    """The largest L with (L - 1) |lb| <= limit."""
    lb = check_float("lower_bound", lower_bound, -88.0, -1e-6)
    return math.floor(check_float("limit", limit, 1.0, 1e4) / -lb) + 1
