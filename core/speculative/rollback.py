"""The whole bill of one verify step, per KDA layer and sequence: snapshot vs replay.

A verify step runs a window of gamma + 1 positions: the token the previous step emitted (its
bonus token, not yet folded into the state) followed by gamma drafts. Verification accepts
n in [0, gamma] drafts, so n + 1 positions commit: even n = 0 makes progress. Acceptance is
modelled per token with probability a until the first rejection, so E[n] = sum_{i=1..gamma} a^i
and P(n < gamma) = 1 - a^gamma.

Sizes come from core.speculative.cost.LayerBytes (state, raw record, conv row, conv history W - 1).
Bytes counted are those a scheme adds beyond the forward pass's one read of the committed
state and of the window's inputs:

  snapshot  holds 1 + gamma states (one per position; the committed state is never needed
            again since at least one position commits); writes gamma + 1 states; on a partial
            accept (n < gamma) copies state n into place: one state read and one written.
  replay    holds the committed state and gamma + 1 raw records; writes the records; replays
            n + 1 positions from the committed state: reads it and n + 1 records, writes the
            new state. Compute: n + 1 state updates of H dk dv each (`replayed`).
  both      keep one short-conv window of W - 1 + gamma + 1 pre-conv rows and write the
            gamma + 1 new rows; rolling it back is a cut at row n + 1 of the window.

Replay holds less: (1 + gamma) S / (S + (gamma + 1) R) < 1 + gamma, whatever the per-position
ratio S / R. It reads more: S + (n + 1) R against the snapshot scheme's one restored S.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import ParamError, check_float, check_int
from core.speculative.cost import LayerBytes


@dataclass(frozen=True, slots=True)
class RollbackLedger:
    """Bytes per layer per verify step for one scheme (expected values under a sampler)."""

    held: float  # peak bytes resident while the window is verified
    written: float  # bytes written per verify step
    read: float  # bytes read per verify step
    replayed: float = 0.0  # positions re-run through the state update (replay compute)

    @property
    def moved(self) -> float:
        return self.written + self.read


def window(draft_len: int) -> int:
    """Positions one verify step runs: the pending (bonus) token plus the drafts."""
    return check_int("draft_len", draft_len, 1) + 1


def expected_accepted(draft_len: int, accept_rate: float) -> float:
    """E[n] when each drafted token is accepted with prob. a until the first rejection."""
    check_int("draft_len", draft_len, 1)
    a = check_float("accept_rate", accept_rate, 0.0, 1.0)
    return float(sum(a**i for i in range(1, draft_len + 1)))


def _bytes(b: object) -> LayerBytes:
    if not isinstance(b, LayerBytes):
        raise ParamError(f"bytes must be a LayerBytes, got {type(b).__name__}")
    return b


def snapshot_outcome(b: LayerBytes, draft_len: int, accepted: int) -> RollbackLedger:
    """Snapshot scheme when exactly `accepted` of `draft_len` drafts are accepted."""
    b, w = _bytes(b), window(draft_len)
    restore = b.state if check_int("accepted", accepted, 0, draft_len) < draft_len else 0
    return RollbackLedger(
        held=float(w * b.state + b.conv_window(w)),
        written=float(w * b.state + restore + w * b.conv_row),
        read=float(restore),
    )


def replay_outcome(b: LayerBytes, draft_len: int, accepted: int) -> RollbackLedger:
    """Replay scheme when exactly `accepted` of `draft_len` drafts are accepted."""
    b, w = _bytes(b), window(draft_len)
    commits = check_int("accepted", accepted, 0, draft_len) + 1
    return RollbackLedger(
        held=float(b.state + w * b.raw + b.conv_window(w)),
        written=float(w * b.raw + b.state + w * b.conv_row),
        read=float(b.state + commits * b.raw),
        replayed=float(commits),
    )


def snapshot_ledger(b: LayerBytes, draft_len: int, accept_rate: float) -> RollbackLedger:
    """The snapshot outcome's expectation over n (closed form)."""
    b, w = _bytes(b), window(draft_len)
    a = check_float("accept_rate", accept_rate, 0.0, 1.0)
    p_partial = 1.0 - a**draft_len
    return RollbackLedger(
        held=float(w * b.state + b.conv_window(w)),
        written=float(w * b.state + p_partial * b.state + w * b.conv_row),
        read=float(p_partial * b.state),
    )


def replay_ledger(b: LayerBytes, draft_len: int, accept_rate: float) -> RollbackLedger:
    """The replay outcome's expectation over n (closed form)."""
    b, w = _bytes(b), window(draft_len)
    commits = expected_accepted(draft_len, accept_rate) + 1.0
    return RollbackLedger(
        held=float(b.state + w * b.raw + b.conv_window(w)),
        written=float(w * b.raw + b.state + w * b.conv_row),
        read=float(b.state + commits * b.raw),
        replayed=commits,
    )


def held_saving(b: LayerBytes, draft_len: int) -> float:
    """Snapshot held / replay held: below 1 + gamma however large the per-position ratio."""
    return snapshot_outcome(b, draft_len, draft_len).held / replay_outcome(b, draft_len, 0).held
