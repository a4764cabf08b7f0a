"""Speculative decoding for KDA layers: roll back a rejected draft by replaying raw inputs.

Exports
  DraftProjections, verify_and_replay   drafts' raw inputs; fold the n accepted into the state
  ReplayCost, rollback_bytes            the byte model: snapshot per position vs raw inputs
  RollbackLedger, snapshot_ledger, replay_ledger, ...   bytes held / moved per verify step
  RawInputRing, SnapshotRing            ReplaySSM's raw-input ring beside the snapshot ring
  ReplaySession, run_session            a seeded session over both rings (figures read it)

Oracle: replaying n accepted drafts equals kda_recurrent over the committed tokens bit for bit
(float64), and the ring streamed with flushes equals one batch recurrence bit for bit.
"""

from core.spec.cost import ReplayCost, rollback_bytes
from core.spec.drafts import DraftProjections, verify_and_replay
from core.spec.ring import RawInputRing, RingFullError, SnapshotRing
from core.spec.rollback import (
    RollbackLedger,
    expected_accepted,
    replay_ledger,
    replay_outcome,
    snapshot_ledger,
    snapshot_outcome,
)

__all__ = [
    "DraftProjections", "RawInputRing", "ReplayCost", "RingFullError", "RollbackLedger",
    "SnapshotRing", "expected_accepted", "replay_ledger", "replay_outcome", "rollback_bytes",
    "snapshot_ledger", "snapshot_outcome", "verify_and_replay",
]
