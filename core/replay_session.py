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

Byte ledger per step, in units of core.replay.rollback_bytes (`state` = one layer's state,
`raw` = one position's raw inputs); the flush is fused into the step that needs it:
  raw-input ring  writes draft_len*raw (+ state on a flush); reads state + c*raw.
  snapshot ring   writes draft_len*state;                     reads state.
Toy units use the session dtype for every field with q stored (exactly what RawInputRing holds);
K3 units are the cost model's defaults (fp32 state; bf16 k, v, beta; fp32 g; no q) x 69 layers.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import torch

from core.errors import ParamError, check_choice, check_float, check_int
from core.kda import kda_recurrent, kda_step
from core.replay import (
    K3,
    K3_KDA_LAYERS,
    TOY,
    DraftProjections,
    KDADims,
    ReplayCost,
    rollback_bytes,
    verify_and_replay,
)
from core.replay_ring import FIELDS, RawInputRing, RingSnapshot, SnapshotRing

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
    snap_restore_exact: bool  # the popped snapshot equals the streaming state bit for bit
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


def simulate(
    capacity: int,
    draft_len: int,
    accept_rate: float,
    steps: int,
    seed: int,
    dtype: str = "float64",
    dims: KDADims = TOY,
) -> ReplaySession:
    """Run the session; deterministic in its arguments."""
    p = SessionParams(capacity, draft_len, accept_rate, steps, seed, dtype)
    tdtype = getattr(torch, p.dtype)
    tu, ku = toy_units(dims, tdtype), rollback_bytes(K3.H, K3.dk, K3.dv, 1)
    checkpoint = s0 = _initial_state(dims, tdtype, p.seed)
    ring = RawInputRing(p.capacity, 1, dims.H, dims.dk, dims.dv, tdtype)
    snaps = SnapshotRing(p.capacity)
    rng = np.random.default_rng(p.seed)
    records: list[StepRecord] = []
    outputs: list[torch.Tensor] = []
    accepted: list[DraftProjections] = []
    layout = ring.snapshot()
    for step in range(p.steps):
        c = ring.num_committed
        # vLLM #49847 flushes when history + 1 + num_spec > L: its window is the bonus token
        # plus the drafts; here a step pushes exactly draft_len entries.
        flushed = c + p.draft_len > p.capacity
        if flushed:
            checkpoint = ring.flush(checkpoint)
        live, _ = verify_and_replay(checkpoint, ring.window(), ring.num_committed)
        drafts = DraftProjections.from_random(
            1, p.draft_len, dims.H, dims.dk, dims.dv, tdtype, seed=step_seed(p.seed, step)
        )
        fields = [getattr(drafts, f) for f in FIELDS]
        state, overwrites = live, 0
        for t in range(p.draft_len):
            ring.push(*(x[:, t] for x in fields))
            _, state = kda_step(*(x[:, t] for x in fields), state)
            overwrites += snaps.push(state)
        layout = ring.snapshot()
        n = draw_accepted(rng, p.draft_len, p.accept_rate)
        new_state, o = verify_and_replay(live, ring.window(tentative=True), n)
        pops, exact = 0, True
        if n:
            pops = len(snaps) - p.draft_len + n  # stale snapshots first, then this step's n
            for _ in range(pops):
                restored = snaps.pop()
            exact = torch.equal(restored, new_state)
        total_before = sum(r.n_accepted for r in records)
        kind, token = _slots(layout, n, total_before)
        ring.commit(n)
        ring.rollback()
        outputs.append(o)
        accepted.append(drafts.prefix(n))
        records.append(
            StepRecord(
                step,
                c if flushed else 0,
                layout.start,
                layout.num_committed,
                n,
                kind,
                token,
                p.draft_len,
                overwrites,
                pops,
                len(snaps),
                exact,
                _traffic(tu, c, p.draft_len, flushed, 1),
                _traffic(ku, c, p.draft_len, flushed, K3_KDA_LAYERS),
            )
        )
    final_state, _ = verify_and_replay(checkpoint, ring.window(), ring.num_committed)
    committed = DraftProjections(
        *(torch.cat([getattr(a, f) for a in accepted], dim=1) for f in FIELDS)
    )
    return ReplaySession(
        p,
        dims,
        tuple(records),
        layout,
        s0,
        committed,
        torch.cat(outputs, dim=1),
        final_state,
        tu,
        ku,
        ring.bytes_written,
    )


def batch_reference(session: ReplaySession) -> tuple[torch.Tensor, torch.Tensor]:
    """One kda_recurrent over every committed token from the session's initial state.

    Returns (o [1, N, H, V], final_state [1, H, K, V]).
    """
    c = session.committed
    return kda_recurrent(c.q, c.k, c.v, c.g, c.beta, initial_state=session.initial_state)
