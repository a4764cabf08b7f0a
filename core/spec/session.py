"""A seeded speculative-decode session over ReplaySSM's raw-input ring, beside the snapshot ring.

One verify step (reference §6), with c = committed entries in the ring when the step starts:
  1. flush when the window would not fit, c + draft_len > capacity: fold the c committed entries
     into the checkpoint (RawInputRing.flush) and empty them;
  2. rebuild the live state from checkpoint + ring (verify_and_replay over `window()`);
  3. draft draft_len tokens (DraftProjections.from_random, per-step seed from the session seed)
     and push them as tentative entries; the snapshot baseline pushes the state after each one;
  4. accept n: each draft is accepted with probability accept_rate until the first rejection;
  5. the n accepted outputs come from the live state + `window(tentative=True)`; commit(n) keeps
     them and rollback() drops the rest (a pointer move). The snapshot baseline pops oldest-first
     up to this step's n-th snapshot, which becomes the committed state; n = 0 pops nothing, so
     rejected snapshots stay unpopped until popped or overwritten.

Byte ledger per step, in units of core.spec.cost.rollback_bytes (`state` = one layer's state,
`raw` = one position's raw inputs); the flush is fused into the step that needs it:
  raw-input ring  writes draft_len*raw (+ state on a flush); reads state + c*raw.
  snapshot ring   writes draft_len*state;                     reads state.
Toy units use the session dtype for every field with q stored (exactly what RawInputRing holds);
K3 units are the cost model's defaults (fp32 state; bf16 k, v, beta; fp32 g; no q) x K3.n_kda.
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
from core.spec.cost import ReplayCost, rollback_bytes
from core.spec.drafts import DraftProjections, verify_and_replay
from core.spec.ring import FIELDS, RawInputRing, RingSnapshot, SnapshotRing

DTYPES = ("float64", "float32")
PREFIX_TOKENS = 8


class SlotKind(IntEnum):
    """What a physical ring slot holds after a verify step."""

    EMPTY = 0
    COMMITTED = 1  # committed in an earlier step, not yet flushed
    ACCEPTED = 2  # pushed this step and committed
    ROLLED_BACK = 3  # pushed this step and dropped by rollback()


@dataclass(frozen=True, slots=True)
class SessionParams:
    capacity: int
    draft_len: int
    accept_rate: float
    steps: int
    seed: int
    dtype: str = "float64"

    def __post_init__(self) -> None:
        check_int("capacity", self.capacity, 1, 4096)
        check_int("draft_len", self.draft_len, 1, 4096)
        if self.capacity < self.draft_len:
            raise ParamError(
                f"capacity must be >= draft_len (a whole draft window must fit), "
                f"got capacity={self.capacity} < draft_len={self.draft_len}"
            )
        check_float("accept_rate", self.accept_rate, 0.0, 1.0)
        check_int("steps", self.steps, 1, 4096)
        check_int("seed", self.seed, 0, 2**31 - 1)
        check_choice("dtype", self.dtype, DTYPES)


@dataclass(frozen=True, slots=True)
class Traffic:
    """Bytes one verify step moves, per scheme (one sequence)."""

    raw_written: int
    raw_read: int
    snap_written: int
    snap_read: int


@dataclass(frozen=True, slots=True)
class StepRecord:
    step: int
    flushed: int  # entries folded into the checkpoint before this step's pushes; 0: no flush
    start: int  # ring start pointer during the step (after any flush)
    committed_before: int  # committed entries in the ring when the draft was pushed
    n_accepted: int
    slot_kind: tuple[SlotKind, ...]  # per physical slot, after verification
    slot_token: tuple[int, ...]  # per physical slot: logical token index, -1 when empty
    snap_pushes: int
    snap_overwrites: int  # pushes that overwrote an unpopped snapshot (FIFO overwrite)
    snap_pops: int
    snap_held: int  # snapshots in the ring after the step
    toy: Traffic
    k3: Traffic


@dataclass(frozen=True)
class ReplaySession:
    params: SessionParams
    dims: KDADims
    steps: tuple[StepRecord, ...]
    layout: RingSnapshot  # the ring after the last step's pushes, before verification
    initial_state: torch.Tensor  # [1, H, K, V]
    committed: DraftProjections  # raw inputs of every committed token [1, N, H, *]
    outputs: torch.Tensor  # streaming outputs of the committed tokens [1, N, H, V]
    final_state: torch.Tensor  # checkpoint + replay of the ring after the last step [1, H, K, V]
    snap_restored: tuple[torch.Tensor | None, ...]  # per step: the snapshot restored; None: n=0
    toy_units: ReplayCost
    k3_units: ReplayCost
    ring_bytes_written: int  # RawInputRing's own accounting of pushed bytes

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


def toy_units(dims: KDADims, dtype: torch.dtype) -> ReplayCost:
    w = torch.empty((), dtype=dtype).element_size()
    return rollback_bytes(
        dims.H,
        dims.dk,
        dims.dv,
        1,
        state_bytes=w,
        k_bytes=w,
        v_bytes=w,
        g_bytes=w,
        beta_bytes=w,
        include_q=True,
        q_bytes=w,
    )


def _traffic(u: ReplayCost, c: int, draft_len: int, flushed: bool, layers: int) -> Traffic:
    state, raw = u.snapshot_bytes_per_step, u.raw_bytes_per_step
    return Traffic(
        layers * (draft_len * raw + (state if flushed else 0)),
        layers * (state + c * raw),
        layers * draft_len * state,
        layers * state,
    )


def _initial_state(dims: KDADims, dtype: torch.dtype, seed: int) -> torch.Tensor:
    p = DraftProjections.from_random(
        1, PREFIX_TOKENS, dims.H, dims.dk, dims.dv, dtype, seed=step_seed(seed, -1)
    )
    return kda_recurrent(p.q, p.k, p.v, p.g, p.beta)[1]  # [1, H, K, V]


def _slots(snap: RingSnapshot, n: int, total_before: int) -> tuple[tuple, tuple]:
    kind, token = [SlotKind.EMPTY] * snap.capacity, [-1] * snap.capacity
    first = total_before - snap.num_committed
    for i, slot in enumerate(snap.committed_slots):
        kind[slot], token[slot] = SlotKind.COMMITTED, first + i
    for j, slot in enumerate(snap.tentative_slots):
        kind[slot] = SlotKind.ACCEPTED if j < n else SlotKind.ROLLED_BACK
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
        self.toy_units = toy_units(dims, self.dtype)
        self.k3_units = rollback_bytes(K3.kda.H, K3.kda.dk, K3.kda.dv, 1)
        self.initial_state = self.checkpoint = _initial_state(dims, self.dtype, p.seed)
        self.ring = RawInputRing(p.capacity, 1, dims.H, dims.dk, dims.dv, self.dtype)
        self.snaps = SnapshotRing(p.capacity)
        self.rng = np.random.default_rng(p.seed)
        self.layout = self.ring.snapshot()
        self.records: list[StepRecord] = []
        self.restored: list[torch.Tensor | None] = []
        self.outputs: list[torch.Tensor] = []
        self.accepted: list[DraftProjections] = []
        self.total_accepted = 0

    def verify_step(self, step: int) -> None:
        c = self.ring.num_committed
        # vLLM #49847 flushes when history + 1 + num_spec > L: its window is the bonus token
        # plus the drafts; here a step pushes exactly draft_len entries.
        flushed = c + self.p.draft_len > self.p.capacity
        if flushed:
            self.checkpoint = self.ring.flush(self.checkpoint)
        live = self._live_state()
        drafts, overwrites = self._push_drafts(step, live)
        self.layout = self.ring.snapshot()
        n = draw_accepted(self.rng, self.p.draft_len, self.p.accept_rate)
        _, o = verify_and_replay(live, self.ring.window(tentative=True), n)
        pops, restored = self._pop_snapshots(n)
        kind, token = _slots(self.layout, n, self.total_accepted)
        self.ring.commit(n)
        self.ring.rollback()
        self.outputs.append(o)
        self.accepted.append(drafts.prefix(n))
        self.restored.append(restored)
        self.total_accepted += n
        self.records.append(StepRecord(
            step=step, flushed=c if flushed else 0, start=self.layout.start,
            committed_before=self.layout.num_committed, n_accepted=n, slot_kind=kind,
            slot_token=token, snap_pushes=self.p.draft_len, snap_overwrites=overwrites,
            snap_pops=pops, snap_held=len(self.snaps),
            toy=_traffic(self.toy_units, c, self.p.draft_len, flushed, 1),
            k3=_traffic(self.k3_units, c, self.p.draft_len, flushed, K3.n_kda),
        ))

    def _live_state(self) -> torch.Tensor:
        """Checkpoint + replay of the committed entries in the ring."""
        live, _ = verify_and_replay(self.checkpoint, self.ring.window(), self.ring.num_committed)
        return live

    def _push_drafts(self, step: int, live: torch.Tensor) -> tuple[DraftProjections, int]:
        """Push this step's drafts into both rings; returns (drafts, snapshot overwrites)."""
        d = self.dims
        drafts = DraftProjections.from_random(
            1, self.p.draft_len, d.H, d.dk, d.dv, self.dtype, seed=step_seed(self.p.seed, step)
        )
        fields = [getattr(drafts, f) for f in FIELDS]
        state, overwrites = live, 0
        for t in range(self.p.draft_len):
            self.ring.push(*(x[:, t] for x in fields))
            _, state = kda_step(*(x[:, t] for x in fields), state)
            overwrites += self.snaps.push(state)
        return drafts, overwrites

    def _pop_snapshots(self, n: int) -> tuple[int, torch.Tensor | None]:
        """Pop stale snapshots, then this step's first n; the last one popped is the restore."""
        if not n:
            return 0, None
        pops = len(self.snaps) - self.p.draft_len + n
        for _ in range(pops):
            restored = self.snaps.pop()
        return pops, restored

    def finish(self) -> ReplaySession:
        final_state = self._live_state()
        committed = DraftProjections(
            *(torch.cat([getattr(a, f) for a in self.accepted], dim=1) for f in FIELDS)
        )
        return ReplaySession(
            params=self.p, dims=self.dims, steps=tuple(self.records), layout=self.layout,
            initial_state=self.initial_state, committed=committed,
            outputs=torch.cat(self.outputs, dim=1), final_state=final_state,
            snap_restored=tuple(self.restored), toy_units=self.toy_units,
            k3_units=self.k3_units, ring_bytes_written=self.ring.bytes_written,
        )


def batch_reference(session: ReplaySession) -> tuple[torch.Tensor, torch.Tensor]:
    """One kda_recurrent over every committed token from the session's initial state.

    Returns (o [1, N, H, V], final_state [1, H, K, V]).
    """
    c = session.committed
    return kda_recurrent(c.q, c.k, c.v, c.g, c.beta, initial_state=session.initial_state)
