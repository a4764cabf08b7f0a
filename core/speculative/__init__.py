"""Speculative decoding for KDA layers: roll back a rejected draft by replaying raw inputs.

A verify step runs a window of gamma + 1 positions (the bonus token the previous step emitted,
then gamma drafts); n accepted drafts commit n + 1 positions, so every step makes progress.

Exports
  DraftProjections, verify_and_replay   a window's raw inputs; fold the committed ones in
  ReplayCost, rollback_bytes            the byte model: snapshot per position vs raw inputs
  LayerBytes, layer_bytes               one layer's state, record and short-conv window bytes
  RollbackLedger, snapshot_ledger, replay_ledger, ...   the whole bill of one verify step
  conv_history_after                    the short-conv history after a rollback (a cut)
  needs_flush, ring_schedule            the ring's flush rule, and its bookkeeping alone
  RawInputRing, SnapshotRing            ReplaySSM's raw-input ring beside the snapshot ring
  core.speculative.session              a seeded session over both rings (figures read it)
  core.speculative.oracles              live oracle checks the replay figures print (replay, conv
                                        cut, ring session against the batch recurrence)

Oracle: replaying the committed positions equals kda_recurrent over the committed tokens bit
for bit (float64), and the ring streamed with flushes equals one batch recurrence bit for bit.
"""

from core.speculative.bounds import max_ring_for_gate, needs_flush, ring_schedule
from core.speculative.conv import conv_history_after
from core.speculative.cost import LayerBytes, ReplayCost, layer_bytes, rollback_bytes
from core.speculative.drafts import DraftProjections, verify_and_replay
from core.speculative.ring import RawInputRing, RingFullError, SnapshotRing
from core.speculative.rollback import (
    RollbackLedger,
    expected_accepted,
    held_saving,
    replay_ledger,
    replay_outcome,
    snapshot_ledger,
    snapshot_outcome,
    window,
)

__all__ = [
    "DraftProjections", "LayerBytes", "RawInputRing", "ReplayCost", "RingFullError",
    "RollbackLedger", "SnapshotRing", "conv_history_after", "expected_accepted", "held_saving",
    "layer_bytes", "max_ring_for_gate", "needs_flush", "replay_ledger", "replay_outcome",
    "ring_schedule", "rollback_bytes", "snapshot_ledger", "snapshot_outcome",
    "verify_and_replay", "window",
]
