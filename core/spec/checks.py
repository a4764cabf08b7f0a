"""Live checks the replay figures print: each compares a fast path with an independent reference.

`check_replay`: verify_and_replay of n accepted drafts (zero, partial, all) against kda_recurrent
over the committed tokens and against the chunked form. `check_session`: a ring session's
streaming outputs against one batch recurrence, the chunked form against the same batch, and
every snapshot the snapshot ring restored against the batch state at that point. Results are
frozen records of measured errors; the figures only format them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.errors import check_choice, check_int
from core.kda import kda_chunked, kda_recurrent, kda_step
from core.spec.drafts import DraftProjections, verify_and_replay
from core.spec.session import DTYPES, ReplaySession, batch_reference
from core.tolerances import CHUNKED_MAX_ABS, max_abs

PREFIX_TOKENS = 8
REPLAY_SEED = 0
REPLAY_CHUNK = 4
SESSION_CHUNK = 16


@dataclass(frozen=True, slots=True)
class ReplayCase:
    """One acceptance case: n of the drafts accepted and replayed."""

    label: str  # "zero", "partial" or "all"
    n: int
    max_abs_output: float  # replay vs kda_recurrent over the n committed tokens
    max_abs_state: float
    max_abs_chunked: float  # replay vs kda_chunked (state and outputs)
    chunked_tol: float
    committed_untouched: bool  # the committed state is bit-identical after the replay
    replay_outputs: torch.Tensor  # [1, n, H, V]
    reference_outputs: torch.Tensor  # [1, n, H, V]

    @property
    def chunked_within_tol(self) -> bool:
        return self.max_abs_chunked <= self.chunked_tol


@dataclass(frozen=True, slots=True)
class ReplayCheck:
    draft_len: int
    accepted: int
    dtype: str
    drafted_outputs: torch.Tensor  # [1, D, H, V] every draft folded in (the speculative run)
    cases: tuple[ReplayCase, ...]


def committed_state(heads: int, dk: int, dv: int, dtype: torch.dtype) -> torch.Tensor:
    """S0: the state after a short random prefix, so replay starts from a realistic state."""
    p = DraftProjections.from_random(1, PREFIX_TOKENS, heads, dk, dv, dtype, seed=REPLAY_SEED + 1)
    return kda_recurrent(p.q, p.k, p.v, p.g, p.beta)[1]  # [1, H, K, V]


def check_replay(draft_len: int, accepted: int, heads: int, dk: int, dv: int, dtype: str
                 ) -> ReplayCheck:
    """Replay zero, `accepted` and all of `draft_len` seeded drafts and measure the errors."""
    check_choice("dtype", dtype, DTYPES)
    draft_len = check_int("draft_len", draft_len, 1, 4096)
    accepted = check_int("accepted", accepted, 0, draft_len)
    tdtype = getattr(torch, dtype)
    s0 = committed_state(heads, dk, dv, tdtype)
    d = DraftProjections.from_random(1, draft_len, heads, dk, dv, tdtype, seed=REPLAY_SEED)
    o_draft, _ = kda_recurrent(d.q, d.k, d.v, d.g, d.beta, initial_state=s0)  # [1, D, H, V]
    cases = []
    for label, n in (("zero", 0), ("partial", accepted), ("all", draft_len)):
        before = s0.clone()
        s_new, o_rep = verify_and_replay(s0, d, n)  # o_rep [1, n, H, V]
        c = d.prefix(n)
        o_ref, s_ref = kda_recurrent(c.q, c.k, c.v, c.g, c.beta, initial_state=s0)
        o_ch, s_ch = kda_chunked(c.q, c.k, c.v, c.g, c.beta, initial_state=s0,
                                 chunk_size=REPLAY_CHUNK)
        cases.append(ReplayCase(
            label=label, n=n, max_abs_output=max_abs(o_rep, o_ref),
            max_abs_state=max_abs(s_new, s_ref),
            max_abs_chunked=max(max_abs(s_new, s_ch), max_abs(o_rep, o_ch)),
            chunked_tol=CHUNKED_MAX_ABS[dtype], committed_untouched=torch.equal(s0, before),
            replay_outputs=o_rep, reference_outputs=o_ref,
        ))
    return ReplayCheck(draft_len, accepted, dtype, o_draft, tuple(cases))


@dataclass(frozen=True, slots=True)
class SessionCheck:
    """A ring session measured against one batch recurrence over its committed tokens."""

    tokens_committed: int
    reference_outputs: torch.Tensor  # [1, N, H, V] batch kda_recurrent
    max_abs_output: float  # streaming vs batch
    max_abs_state: float
    bit_identical: bool
    max_abs_chunked: float  # kda_chunked (chunk SESSION_CHUNK) vs batch; 0.0 when N == 0
    chunked_tol: float
    restores: int  # steps where the snapshot ring restored a state (n > 0)
    restores_exact: int  # of those, bit-identical to the batch state after that step
    max_abs_restore: float  # worst restore vs the batch state; 0.0 with no restore
    flush_at: tuple[int, ...]  # committed-token position of each flush

    @property
    def chunked_within_tol(self) -> bool:
        return self.max_abs_chunked <= self.chunked_tol


def batch_states(session: ReplaySession) -> list[torch.Tensor]:
    """The batch state after each step's committed tokens: kda_step over the committed run."""
    c, S = session.committed, session.initial_state
    out, t = [], 0
    for r in session.steps:
        for _ in range(r.n_accepted):
            _, S = kda_step(c.q[:, t], c.k[:, t], c.v[:, t], c.g[:, t], c.beta[:, t], S)
            t += 1
        out.append(S)
    return out


def check_session(session: ReplaySession) -> SessionCheck:
    o_ref, s_ref = batch_reference(session)
    N = session.num_committed
    if N:
        c = session.committed
        o_ch, s_ch = kda_chunked(c.q, c.k, c.v, c.g, c.beta, initial_state=session.initial_state,
                                 chunk_size=SESSION_CHUNK)
        d_chunked = max(max_abs(o_ch, o_ref), max_abs(s_ch, s_ref))
    else:
        d_chunked = 0.0
    errs = [max_abs(r, ref) for r, ref in zip(session.snap_restored, batch_states(session),
                                               strict=True) if r is not None]
    flush_at, total = [], 0
    for r in session.steps:
        flush_at += [total] if r.flushed else []
        total += r.n_accepted
    return SessionCheck(
        tokens_committed=N, reference_outputs=o_ref,
        max_abs_output=max_abs(session.outputs, o_ref),
        max_abs_state=max_abs(session.final_state, s_ref),
        bit_identical=torch.equal(session.outputs, o_ref) and torch.equal(session.final_state,
                                                                          s_ref),
        max_abs_chunked=d_chunked, chunked_tol=CHUNKED_MAX_ABS[session.params.dtype],
        restores=len(errs), restores_exact=sum(e == 0.0 for e in errs),
        max_abs_restore=max(errs, default=0.0), flush_at=tuple(flush_at),
    )


def token_norms(o: torch.Tensor) -> np.ndarray:
    """‖o_t‖ over all heads per position, float64: [T] from o [1, T, H, V]."""
    return o.double().flatten(2).norm(dim=-1)[0].numpy()
