"""A seeded speculative-decode session over ReplaySSM's raw-input ring, beside the snapshot ring.

One verify step (reference §6) runs a window of gamma + 1 entries: the bonus token the previous
step emitted (not yet in the state) followed by gamma drafts. With c = committed entries in the
ring when the step starts:
  1. flush when the window would not fit, c + gamma + 1 > capacity (core.speculative.bounds): fold
     the c committed entries into the checkpoint (RawInputRing.flush) and empty them;
  2. rebuild the live state from checkpoint + ring (verify_and_replay over `window()`);
  3. draft the window (DraftProjections.from_random, per-step seed from the session seed) and
     push it as tentative entries; the snapshot baseline pushes the state after each entry;
  4. accept n drafts: each is accepted with probability accept_rate until the first rejection;
     n + 1 entries commit (the bonus token always does), so every step makes progress;
  5. the n + 1 committed outputs come from the live state + `window(tentative=True)`;
     commit(n + 1) keeps them and rollback() drops the rest (a pointer move). The snapshot
     baseline pops oldest-first up to this step's (n + 1)-th snapshot, which becomes the
     committed state; the rejected snapshots stay unpopped until popped or overwritten.

Byte ledger per step at K3 scale (core.speculative.cost's convention, LayerBytes of K3 x 69 KDA
layers: state S, record R, conv row C), counting what a scheme adds beyond the forward pass's
one read of the state it starts from and of the window's inputs; a flush is fused into the
step that needs it:
  raw-input ring  writes (gamma + 1)(R + C), plus S on a flush; reads the c committed records
                  it runs through the state update (c updates: its price is compute).
  snapshot ring   core.speculative.rollback.snapshot_outcome: writes (gamma + 1)(S + C) plus a
                  restore copy S when n < gamma; reads that S.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import torch

from core.dims import K3, REPLAY_TOY, KDADims
from core.errors import ParamError, check_choice, check_float, check_int
from core.kda import kda_recurrent, kda_step
from core.speculative.bounds import needs_flush
from core.speculative.cost import LayerBytes, layer_bytes
from core.speculative.drafts import DraftProjections, verify_and_replay
from core.speculative.ring import FIELDS, RawInputRing, RingSnapshot, SnapshotRing
from core.speculative.rollback import snapshot_outcome

DTYPES = ("float64", "float32")
PREFIX_TOKENS = 8


class SlotKind(IntEnum):
    """What a physical ring slot holds after a verify step."""

    EMPTY = 0
    COMMITTED = 1  # committed in an earlier step, not yet flushed
    ACCEPTED = 2  # pushed this step and committed (the bonus token or an accepted draft)
    ROLLED_BACK = 3  # pushed this step and dropped by rollback()


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionParams:
    capacity: int
    draft_len: int
    accept_rate: float
    steps: int
    seed: int
    dtype: str = "float64"

    def __post_init__(self) -> None:
        check_int("capacity", self.capacity, 2, 4096)
        check_int("draft_len", self.draft_len, 1, 4096)
        if self.capacity < self.draft_len + 1:
            raise ParamError(
                f"capacity must be >= draft_len + 1 (a whole window, the bonus token plus the "
                f"drafts, must fit), got capacity={self.capacity}, draft_len={self.draft_len}"
            )
        check_float("accept_rate", self.accept_rate, 0.0, 1.0)
        check_int("steps", self.steps, 1, 4096)
        check_int("seed", self.seed, 0, 2**31 - 1)
        check_choice("dtype", self.dtype, DTYPES)

    @property
    def window(self) -> int:
        """Entries one verify step pushes: the bonus token plus the drafts."""
        return self.draft_len + 1


@dataclass(frozen=True, slots=True)
class Traffic:
    """Bytes one verify step moves, per scheme (one sequence, every KDA layer)."""

    raw_written: int
    raw_read: int
    snap_written: int
    snap_read: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StepRecord:
    step: int
    flushed: int  # entries folded into the checkpoint before this step's pushes; 0: no flush
    start: int  # ring start pointer during the step (after any flush)
    committed_before: int  # committed entries in the ring when the window was pushed
    n_accepted: int  # drafts accepted; n_accepted + 1 entries commit
    slot_kind: tuple[SlotKind, ...]  # per physical slot, after verification
    slot_token: tuple[int, ...]  # per physical slot: logical token index, -1 when empty
    snap_pushes: int
    snap_overwrites: int  # pushes that overwrote an unpopped snapshot (FIFO overwrite)
    snap_pops: int
    snap_held: int  # snapshots in the ring after the step
    k3: Traffic

    @property
    def n_committed(self) -> int:
        """Entries this step commits: the bonus token plus the accepted drafts."""
        return self.n_accepted + 1

    @property
    def replayed(self) -> int:
        """Committed entries run through the state update first: folded by a flush or replayed
        to rebuild the live state (one of flushed, committed_before is 0)."""
        return self.flushed + self.committed_before


@dataclass(frozen=True, kw_only=True)
class ReplaySession:
    params: SessionParams
    dims: KDADims
    steps: tuple[StepRecord, ...]
    layout: RingSnapshot  # the ring after the last step's pushes, before verification
    initial_state: torch.Tensor  # [1, H, K, V]
    committed: DraftProjections  # raw inputs of every committed token [1, N, H, *]
    outputs: torch.Tensor  # streaming outputs of the committed tokens [1, N, H, V]
    final_state: torch.Tensor  # checkpoint + replay of the ring after the last step [1, H, K, V]
    snap_restored: tuple[torch.Tensor, ...]  # per step: the snapshot that became committed
    k3_units: LayerBytes  # one K3 KDA layer's bytes (core.speculative.cost convention)
    ring_bytes_written: int  # RawInputRing's own accounting of pushed bytes
    ring_entry_bytes: int  # what one RawInputRing entry stores (every field, compute dtype)
    layouts: tuple[RingSnapshot, ...] = ()  # per step: the ring after its pushes (layout: last)

    @property
    def num_committed(self) -> int:
        return int(self.outputs.shape[1])


def step_seed(seed: int, step: int) -> int:
    """A per-step draft seed derived from the session seed (hashlib, never hash())."""
    digest = hashlib.blake2b(f"replay_ring/{seed}/{step}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & (2**63 - 1)


def draw_accepted(rng: np.random.Generator, draft_len: int, accept_rate: float) -> int:
    """n ~ truncated geometric: count of leading drafts with u < a (a = 1: all; a = 0: none)."""
    u = rng.random(draft_len)
    rejected = np.flatnonzero(u >= accept_rate)
    return int(rejected[0]) if rejected.size else draft_len


def accepted_draws(params: SessionParams) -> tuple[int, ...]:
    """The session's n per step, alone (the same draws run_session makes)."""
    rng = np.random.default_rng(params.seed)
    return tuple(draw_accepted(rng, params.draft_len, params.accept_rate)
                 for _ in range(params.steps))


def _traffic(u: LayerBytes, c: int, p: SessionParams, n: int, flushed: bool) -> Traffic:
    """c: committed entries run through the state update this step (before any flush)."""
    snap = snapshot_outcome(u, p.draft_len, n)
    w, layers = p.window, K3.n_kda
    return Traffic(
        raw_written=layers * (w * (u.raw + u.conv_row) + (u.state if flushed else 0)),
        raw_read=layers * c * u.raw,
        snap_written=layers * int(snap.written),
        snap_read=layers * int(snap.read),
    )


def _initial_state(dims: KDADims, dtype: torch.dtype, seed: int) -> torch.Tensor:
    p = DraftProjections.from_random(
        1, PREFIX_TOKENS, dims.H, dims.dk, dims.dv, dtype, seed=step_seed(seed, -1)
    )
    return kda_recurrent(p.q, p.k, p.v, p.g, p.beta)[1]  # [1, H, K, V]


def _slots(snap: RingSnapshot, commits: int, total_before: int) -> tuple[tuple, tuple]:
    kind, token = [SlotKind.EMPTY] * snap.capacity, [-1] * snap.capacity
    first = total_before - snap.num_committed
    for i, slot in enumerate(snap.committed_slots):
        kind[slot], token[slot] = SlotKind.COMMITTED, first + i
    for j, slot in enumerate(snap.tentative_slots):
        kind[slot] = SlotKind.ACCEPTED if j < commits else SlotKind.ROLLED_BACK
        token[slot] = total_before + j
    return tuple(kind), tuple(token)


def run_session(params: SessionParams, dims: KDADims = REPLAY_TOY) -> ReplaySession:
    """Run the session; deterministic in its arguments."""
    run = _SessionRun(params, dims)
    for step in range(params.steps):
        run.verify_step(step)
    return run.finish()


class _SessionRun:
    """One session in progress: the raw-input ring, its checkpoint and the snapshot ring."""

    def __init__(self, p: SessionParams, dims: KDADims) -> None:
        self.p, self.dims = p, dims
        self.dtype = getattr(torch, p.dtype)
        self.units = layer_bytes(K3.kda)
        self.initial_state = self.checkpoint = _initial_state(dims, self.dtype, p.seed)
        self.ring = RawInputRing(p.capacity, 1, dims.H, dims.dk, dims.dv, self.dtype)
        self.snaps = SnapshotRing(p.capacity)
        self.rng = np.random.default_rng(p.seed)
        self.layout = self.ring.snapshot()
        self.records: list[StepRecord] = []
        self.layouts: list[RingSnapshot] = []
        self.restored: list[torch.Tensor] = []
        self.outputs: list[torch.Tensor] = []
        self.accepted: list[DraftProjections] = []
        self.total_committed = 0

    def verify_step(self, step: int) -> None:
        c = self.ring.num_committed
        flushed = needs_flush(c, self.p.draft_len, self.p.capacity)
        if flushed:
            self.checkpoint = self.ring.flush(self.checkpoint)
        live = self._live_state()
        drafts, overwrites = self._push_window(step, live)
        self.layout = self.ring.snapshot()
        self.layouts.append(self.layout)
        n = draw_accepted(self.rng, self.p.draft_len, self.p.accept_rate)
        commits = n + 1
        _, o = verify_and_replay(live, self.ring.window(tentative=True), commits)
        pops, restored = self._pop_snapshots(commits)
        kind, token = _slots(self.layout, commits, self.total_committed)
        self.ring.commit(commits)
        self.ring.rollback()
        self.outputs.append(o)
        self.accepted.append(drafts.prefix(commits))
        self.restored.append(restored)
        self.total_committed += commits
        self.records.append(StepRecord(
            step=step, flushed=c if flushed else 0, start=self.layout.start,
            committed_before=self.layout.num_committed, n_accepted=n, slot_kind=kind,
            slot_token=token, snap_pushes=self.p.window, snap_overwrites=overwrites,
            snap_pops=pops, snap_held=len(self.snaps),
            k3=_traffic(self.units, c, self.p, n, flushed),
        ))

    def _live_state(self) -> torch.Tensor:
        """Checkpoint + replay of the committed entries in the ring."""
        live, _ = verify_and_replay(self.checkpoint, self.ring.window(), self.ring.num_committed)
        return live

    def _push_window(self, step: int, live: torch.Tensor) -> tuple[DraftProjections, int]:
        """Push this step's window into both rings; returns (window, snapshot overwrites)."""
        d = self.dims
        drafts = DraftProjections.from_random(
            1, self.p.window, d.H, d.dk, d.dv, self.dtype, seed=step_seed(self.p.seed, step)
        )
        fields = [getattr(drafts, f) for f in FIELDS]
        state, overwrites = live, 0
        for t in range(self.p.window):
            self.ring.push(*(x[:, t] for x in fields))
            _, state = kda_step(*(x[:, t] for x in fields), state)
            overwrites += self.snaps.push(state)
        return drafts, overwrites

    def _pop_snapshots(self, commits: int) -> tuple[int, torch.Tensor]:
        """Pop stale snapshots, then this step's first `commits`; the last one popped is kept."""
        pops = len(self.snaps) - self.p.window + commits
        for _ in range(pops):
            restored = self.snaps.pop()
        return pops, restored

    def finish(self) -> ReplaySession:
        final_state = self._live_state()
        committed = DraftProjections(
            **{f: torch.cat([getattr(a, f) for a in self.accepted], dim=1) for f in FIELDS})
        return ReplaySession(
            params=self.p, dims=self.dims, steps=tuple(self.records), layout=self.layout,
            initial_state=self.initial_state, committed=committed,
            outputs=torch.cat(self.outputs, dim=1), final_state=final_state,
            snap_restored=tuple(self.restored), k3_units=self.units,
            ring_bytes_written=self.ring.bytes_written, ring_entry_bytes=self.ring.entry_bytes,
            layouts=tuple(self.layouts),
        )


def batch_reference(session: ReplaySession) -> tuple[torch.Tensor, torch.Tensor]:
    """One kda_recurrent over every committed token from the session's initial state.

    Returns (o [1, N, H, V], final_state [1, H, K, V]).
    """
    c = session.committed
    return kda_recurrent(c.q, c.k, c.v, c.g, c.beta, initial_state=session.initial_state)
