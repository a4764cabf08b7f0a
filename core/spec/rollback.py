"""Rollback cost explorer: bytes held and moved per verify step, snapshot vs replay.

Per layer, with `state` = bytes of one KDA state and `raw` = bytes of one draft step's raw
inputs (see core.spec.cost.rollback_bytes for both). A verify step drafts `draft_len` tokens and
accepts n of them. Acceptance is modelled per token with probability `accept_rate`, the draft
stopping at the first rejection, so E[n] = sum_{i=1..gamma} a^i and P(n < gamma) = 1 - a^gamma.

Snapshot scheme: holds the committed state plus one copy per draft step; writes gamma copies
while drafting; on a partial accept restores copy n (one state read and one written).
Replay scheme: holds the committed state plus gamma raw records; writes gamma records while
drafting; when n > 0 (probability a) reads the committed state and the n accepted records and
writes the new state (the replay itself is O(n H d_k d_v) compute, counted separately).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import check_float, check_int


@dataclass(frozen=True, slots=True)
class RollbackLedger:
    """Bytes per layer per verify step for one scheme."""

    held: float  # peak bytes resident while the draft is verified
    written: float  # expected bytes written per verify step
    read: float  # expected bytes read per verify step

    @property
    def moved(self) -> float:
        return self.written + self.read


def expected_accepted(draft_len: int, accept_rate: float) -> float:
    """E[n] when each drafted token is accepted with prob. a until the first rejection."""
    check_int("draft_len", draft_len, 1)
    a = check_float("accept_rate", accept_rate, 0.0, 1.0)
    return float(sum(a**i for i in range(1, draft_len + 1)))


def snapshot_outcome(state: int, draft_len: int, accepted: int) -> RollbackLedger:
    """Snapshot scheme when exactly `accepted` of `draft_len` drafts are accepted."""
    check_int("state", state, 1)
    check_int("draft_len", draft_len, 1)
    restore = state if check_int("accepted", accepted, 0, draft_len) < draft_len else 0
    return RollbackLedger(
        held=float(state * (1 + draft_len)),
        written=float(state * draft_len + restore),
        read=float(restore),
    )


def replay_outcome(state: int, raw: int, draft_len: int, accepted: int) -> RollbackLedger:
    """Replay scheme when exactly `accepted` of `draft_len` drafts are accepted."""
    check_int("state", state, 1)
    check_int("raw", raw, 1)
    check_int("draft_len", draft_len, 1)
    touched = state if check_int("accepted", accepted, 0, draft_len) > 0 else 0
    return RollbackLedger(
        held=float(state + raw * draft_len),
        written=float(raw * draft_len + touched),
        read=float(touched + raw * accepted),
    )


def snapshot_ledger(state: int, draft_len: int, accept_rate: float) -> RollbackLedger:
    check_int("state", state, 1)
    check_int("draft_len", draft_len, 1)
    a = check_float("accept_rate", accept_rate, 0.0, 1.0)
    p_partial = 1.0 - a**draft_len
    return RollbackLedger(
        held=float(state * (1 + draft_len)),
        written=float(state * draft_len + p_partial * state),
        read=float(p_partial * state),
    )


def replay_ledger(state: int, raw: int, draft_len: int, accept_rate: float) -> RollbackLedger:
    check_int("state", state, 1)
    check_int("raw", raw, 1)
    n = expected_accepted(draft_len, accept_rate)
    p_any = float(accept_rate)  # n = 0 leaves the committed state as it is
    return RollbackLedger(
        held=float(state + raw * draft_len),
        written=float(raw * draft_len + p_any * state),
        read=float(p_any * state + raw * n),
    )
