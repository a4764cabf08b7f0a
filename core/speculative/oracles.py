"""Live checks the replay figures print: each compares a fast path with an independent reference.

`check_replay`: a verify window (the pending bonus token plus the drafts) with n drafts
accepted (zero, partial, all), so n + 1 positions replayed by verify_and_replay, against
kda_recurrent over the committed tokens and against the chunked form. `check_conv`: the
short-conv history cut at n + 1 (core.speculative.conv) against a real KDA layer stepped over the
committed tokens only, and the next output when the cut is forgotten. `check_session`: a ring
session's streaming outputs against one batch recurrence, the chunked form against the same
batch, and every snapshot the snapshot ring restored against the batch state at that point.
Results are frozen records of measured errors; the figures only format them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

from core.errors import check_choice, check_int
from core.kda import kda_chunked, kda_recurrent, kda_step
from core.speculative.conv import conv_history_after
from core.speculative.drafts import DraftProjections, verify_and_replay
from core.speculative.session import DTYPES, ReplaySession, batch_reference
from core.tolerances import CHUNKED_MAX_ABS, max_abs

PREFIX_TOKENS = 8
REPLAY_SEED = 0
REPLAY_CHUNK = 4
SESSION_CHUNK = 16
CONV_SEED = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayCase:
    """One acceptance case: n of the drafts accepted, n + 1 window positions replayed. The
    replay's and the reference's outputs and states are kept, so a reader can compare them."""

    label: str  # "zero", "partial" or "all"
    n: int
    max_abs_chunked: float  # replay vs kda_chunked (state and outputs)
    chunked_tol: float
    committed_untouched: bool  # the committed state is bit-identical after the replay
    replay_outputs: torch.Tensor  # [1, n + 1, H, V] verify_and_replay
    reference_outputs: torch.Tensor  # [1, n + 1, H, V] kda_recurrent over the committed tokens
    replay_state: torch.Tensor  # [1, H, K, V]
    reference_state: torch.Tensor  # [1, H, K, V]

    @property
    def max_abs_output(self) -> float:
        return max_abs(self.replay_outputs, self.reference_outputs)

    @property
    def max_abs_state(self) -> float:
        return max_abs(self.replay_state, self.reference_state)

    @property
    def replayed(self) -> int:
        """Positions replayed: the bonus token plus the n accepted drafts."""
        return self.n + 1

    @property
    def chunked_within_tol(self) -> bool:
        return self.max_abs_chunked <= self.chunked_tol


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayCheck:
    draft_len: int
    accepted: int
    dtype: str
    drafted_outputs: torch.Tensor  # [1, D + 1, H, V] every window position folded in
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
    d = DraftProjections.from_random(1, draft_len + 1, heads, dk, dv, tdtype, seed=REPLAY_SEED)
    o_draft, _ = kda_recurrent(d.q, d.k, d.v, d.g, d.beta, initial_state=s0)  # [1, D+1, H, V]
    cases = []
    for label, n in (("zero", 0), ("partial", accepted), ("all", draft_len)):
        before = s0.clone()
        s_new, o_rep = verify_and_replay(s0, d, n + 1)  # o_rep [1, n + 1, H, V]
        c = d.prefix(n + 1)
        o_ref, s_ref = kda_recurrent(c.q, c.k, c.v, c.g, c.beta, initial_state=s0)
        o_ch, s_ch = kda_chunked(c.q, c.k, c.v, c.g, c.beta, initial_state=s0,
                                 chunk_size=REPLAY_CHUNK)
        cases.append(ReplayCase(
            label=label, n=n, max_abs_chunked=max(max_abs(s_new, s_ch), max_abs(o_rep, o_ch)),
            chunked_tol=CHUNKED_MAX_ABS[dtype], committed_untouched=torch.equal(s0, before),
            replay_outputs=o_rep, reference_outputs=o_ref, replay_state=s_new,
            reference_state=s_ref))
    return ReplayCheck(draft_len=draft_len, accepted=accepted, dtype=dtype, drafted_outputs=o_draft,
                       cases=tuple(cases))


@dataclass(frozen=True, slots=True, kw_only=True)
class ConvCheck:
    """The short-conv history after a verify step, on the tiny model's KDA layer (float32):
    the values themselves, so a reader compares them (the properties are what the figure
    prints)."""

    conv_size: int
    commits: int  # positions committed: n + 1
    window: int  # positions pushed: gamma + 1
    cut_history: torch.Tensor  # [1, W - 1, 3C] conv_history_after(history, window rows, n + 1)
    committed_history: torch.Tensor  # [1, W - 1, 3C] the layer stepped over the commits only
    next_cut: torch.Tensor  # the next token's output from the committed state + cut history
    next_committed: torch.Tensor  # ... from the committed run's own state
    next_uncut: torch.Tensor  # ... with the history left at the whole window

    @property
    def history_exact(self) -> bool:
        return torch.equal(self.cut_history, self.committed_history)

    @property
    def next_exact(self) -> bool:
        return torch.equal(self.next_cut, self.next_committed)

    @property
    def next_off_uncut(self) -> float:
        """max|diff| of the next output when the history is not cut."""
        return max_abs(self.next_uncut, self.next_committed)


@functools.cache
def _conv_layer():  # the tiny model's KDA layer with seeded random weights (no training)
    from core.model.config import ModelDims
    from core.model.layers import KDA

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(CONV_SEED)
        return KDA(ModelDims()).eval()


def check_conv(draft_len: int, accepted: int) -> ConvCheck:
    """Step a real KDA layer (conv + recurrence) through a window, then roll back its history."""
    from core.model.kernels import INVARIANT

    draft_len = check_int("draft_len", draft_len, 1, 4096)
    commits = check_int("accepted", accepted, 0, draft_len) + 1
    layer = _conv_layer()
    D = layer.d.d_model
    gen = torch.Generator().manual_seed(CONV_SEED)
    x = torch.randn(1, PREFIX_TOKENS + draft_len + 2, D, generator=gen)  # [1, T, D]
    prefix, win = x[:, :PREFIX_TOKENS], x[:, PREFIX_TOKENS:PREFIX_TOKENS + draft_len + 1]
    nxt = x[:, -1:]  # [1, 1, D]: the token after the committed ones
    with torch.no_grad():
        s0 = layer.init_state(1, x)
        for t in range(PREFIX_TOKENS):
            layer.step(prefix[:, t:t + 1], s0)
        ref = _clone(s0)
        for t in range(commits):
            layer.step(win[:, t:t + 1], ref)
        spec = _clone(s0)
        for t in range(draft_len + 1):
            layer.step(win[:, t:t + 1], spec)
        # the pre-conv rows the window pushed, one per position as the step computes them (a
        # longer matmul could round differently)
        rows = torch.cat([layer.project(win[:, t:t + 1], INVARIANT)[0]
                          for t in range(draft_len + 1)], 1)
        cut = conv_history_after(s0.conv, rows, commits)  # [1, W - 1, 3C]
        fixed, stale = _clone(ref), _clone(ref)
        fixed.conv, stale.conv = cut, spec.conv
        want = layer.step(nxt, _clone(ref))
        got, off = layer.step(nxt, fixed), layer.step(nxt, stale)
    return ConvCheck(
        conv_size=layer.d.conv_size, commits=commits, window=draft_len + 1, cut_history=cut,
        committed_history=ref.conv, next_cut=got, next_committed=want, next_uncut=off)


def _clone(s):
    return type(s)(s.conv.clone(), s.S.clone())


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionCheck:
    """A ring session measured against one batch recurrence over its committed tokens."""

    tokens_committed: int
    reference_outputs: torch.Tensor  # [1, N, H, V] batch kda_recurrent
    max_abs_output: float  # streaming vs batch
    max_abs_state: float
    bit_identical: bool
    max_abs_chunked: float  # kda_chunked (chunk SESSION_CHUNK) vs batch
    chunked_tol: float
    restores: int  # steps where the snapshot ring restored a state (every step)
    restores_exact: int  # of those, bit-identical to the batch state after that step
    max_abs_restore: float  # worst restore vs the batch state
    flush_at: tuple[int, ...]  # committed-token position of each flush

    @property
    def chunked_within_tol(self) -> bool:
        return self.max_abs_chunked <= self.chunked_tol


def batch_states(session: ReplaySession) -> list[torch.Tensor]:
    """The batch state after each step's committed tokens: kda_step over the committed run."""
    c, S = session.committed, session.initial_state
    out, t = [], 0
    for r in session.steps:
        for _ in range(r.n_committed):
            _, S = kda_step(c.q[:, t], c.k[:, t], c.v[:, t], c.g[:, t], c.beta[:, t], S)
            t += 1
        out.append(S)
    return out


def check_session(session: ReplaySession) -> SessionCheck:
    o_ref, s_ref = batch_reference(session)
    c = session.committed
    o_ch, s_ch = kda_chunked(c.q, c.k, c.v, c.g, c.beta, initial_state=session.initial_state,
                             chunk_size=SESSION_CHUNK)
    errs = [max_abs(r, ref) for r, ref in zip(session.snap_restored, batch_states(session),
                                               strict=True)]
    flush_at, total = [], 0
    for r in session.steps:
        flush_at += [total] if r.flushed else []
        total += r.n_committed
    return SessionCheck(
        tokens_committed=session.num_committed, reference_outputs=o_ref,
        max_abs_output=max_abs(session.outputs, o_ref),
        max_abs_state=max_abs(session.final_state, s_ref),
        bit_identical=torch.equal(session.outputs, o_ref) and torch.equal(session.final_state,
                                                                          s_ref),
        max_abs_chunked=max(max_abs(o_ch, o_ref), max_abs(s_ch, s_ref)),
        chunked_tol=CHUNKED_MAX_ABS[session.params.dtype],
        restores=len(errs), restores_exact=sum(e == 0.0 for e in errs),
        max_abs_restore=max(errs, default=0.0), flush_at=tuple(flush_at),
    )


def token_norms(o: torch.Tensor) -> np.ndarray:
    """‖o_t‖ over all heads per position, float64: [T] from o [1, T, H, V]."""
    return o.double().flatten(2).norm(dim=-1)[0].numpy()
