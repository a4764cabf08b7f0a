"""Speculative decoding of one request inside the engine's steps: draft, accept, roll back.

A request with draft_len = gamma > 0 in its decode phase has stored `fed` tokens and one
pending byte p (the model's last argmax, emitted but not yet fed); g bytes emitted of n_new:
  draft    `propose`: the drafter proposes up to m = min(budget, n_new - g - 1) bytes (so the
           window never runs past the request's prompt + n_new tokens); the budget starts at
           gamma and, with adaptive drafts (the default), grows by 2 after a fully accepted
           window and shrinks by 1 (not below 1) after a rejection, so text that does not
           repeat itself costs short windows instead of long wasted ones. No proposal: a
           one-token window, which is a plain decode step
  verify   the engine runs the window [p, d_1 .. d_m] in its batched step, as a recurrent
           group (decode's arithmetic, bit for bit: core/serve/verify.py), its tentative MLA
           latents written into pages grown for the window
  accept   `accept`: n = the leading drafts equal to the model's argmax; emitted: d_1 .. d_n
           and the model's token after them (the new pending byte)
  commit   the first n + 1 positions (verify.commit_kda: KDA by replay, the conv tail rolled
           back with it; MLA keeps n + 1 latents); MLA pages past the accepted length go back
So the emitted bytes are exactly plain greedy decoding's. Nothing is published to the prefix
cache here (only prompts are), so rejected work never reaches it.
Expert loads are the cache's misses during the step, each charged to the first row of the
batch whose top-k held the expert; a verify window's rows count as the pending token, an
accepted draft or a rejected draft (`LoadLog`).
"""

from __future__ import annotations

from collections.abc import Sequence

from core.errors import ParamError
from core.experts import ExpertCache
from core.model.layers import KDAOut, KDAState
from core.model.providers import ExpertProvider
from core.model.router import Routing
from core.serve.drafter import Drafter
from core.serve.reports import ExpertLoads, SpecSummary, VerifyStep
from core.serve.request import Request


def propose(req: Request, drafter: Drafter, vocab: int, room: int) -> tuple[int, ...]:
    """The window [pending, drafts...] for req's next verify pass, at most `room` tokens."""
    m = min(req.budget, req.n_new - req.emitted - 1, room - 1)
    pending = req.tokens[-1]
    if m <= 0:
        return (pending,)
    proposal = drafter.propose(bytes(req.tokens), m)
    if not isinstance(proposal, (bytes, bytearray)):
        raise ParamError(f"drafter.propose must return bytes, got {type(proposal).__name__}")
    ids = list(proposal[:m])
    if any(t >= vocab for t in ids):
        raise ParamError(f"drafts must be ids in [0, {vocab - 1}], got {ids}")
    return (pending, *ids)


def accept(req: Request, window: Sequence[int], greedy: Sequence[int], adaptive: bool
           ) -> tuple[int, tuple[int, ...]]:
    """(n accepted drafts, the emitted bytes); updates req's draft budget."""
    drafts = window[1:]
    n = 0
    while n < len(drafts) and drafts[n] == greedy[n]:
        n += 1
    if drafts and adaptive:
        gamma = req.draft_len
        req.budget = min(gamma, req.budget + 2) if n == len(drafts) else max(1, req.budget - 1)
    return n, (*drafts[:n], greedy[n])


def rollback_bytes(states: Sequence[KDAState], records: Sequence[KDAOut], size: int,
                   replayed: int) -> tuple[int, int, int]:
    """Summed over the KDA layers (states: the committed ones, before commit):
    held by replay (raw inputs + pre-conv rows of the window's positions), held by snapshots
    (S + conv tail per position), moved by this rollback (the committed S read and the new S
    written, plus the replayed positions' raw inputs read; 0 when the window was kept whole)."""
    replay = snapshot = moved = 0
    for s, rec in zip(states, records, strict=True):
        if rec.inputs is None:
            continue
        replay += rec.replay_bytes
        S = s.S.numel() * s.S.element_size()
        snapshot += size * (S + s.conv.numel() * s.conv.element_size())
        if replayed:
            moved += 2 * S + replayed * rec.replay_bytes // size
    return replay, snapshot, moved


class LoadLog:
    """Expert-cache misses during one step, from the cache's event log (None: no cache)."""

    def __init__(self, provider: ExpertProvider | None) -> None:
        cache = getattr(provider, "cache", None)
        self.cache = cache if isinstance(cache, ExpertCache) else None
        self.since = self.cache.seq if self.cache is not None else 0

    def misses(self) -> list[tuple[int, int]]:
        """(layer, expert) of every demand miss since the log was made."""
        if self.cache is None:
            return []
        return [(e.layer, e.expert) for e in self.cache.events(self.since) if e.op == "miss"]

    @staticmethod
    def first_rows(routing: Sequence[Routing]) -> list[dict[int, int]]:
        """Per layer: expert -> the first batch row whose top-k held it."""
        owners = []
        for r in routing:
            first: dict[int, int] = {}
            for row, ids in enumerate(r.ids.tolist()):
                for e in ids:
                    first.setdefault(e, row)
            owners.append(first)
        return owners

    @staticmethod
    def charge(misses: Sequence[tuple[int, int]], owners: Sequence[dict[int, int]], start: int,
               size: int, accepted: int) -> ExpertLoads:
        """Misses first needed by rows [start, start + size) (one verify window), by position."""
        counts = [0, 0, 0]
        for layer, e in misses:
            row = owners[layer].get(e) if 0 <= layer < len(owners) else None
            if row is not None and start <= row < start + size:
                pos = row - start
                counts[0 if pos == 0 else 1 if pos <= accepted else 2] += 1
        return ExpertLoads(committed=counts[0], accepted_drafts=counts[1],
                           rejected_drafts=counts[2])


def summarize(steps: list[VerifyStep] | tuple[VerifyStep, ...], draft_len: int) -> SpecSummary:
    return SpecSummary(
        draft_len=draft_len, steps=len(steps), drafted=sum(s.drafted for s in steps),
        accepted=sum(s.accepted for s in steps), replayed=sum(s.replayed for s in steps),
        replay_bytes=sum(s.replay_bytes for s in steps),
        snapshot_bytes=sum(s.snapshot_bytes for s in steps),
        loads=ExpertLoads(committed=sum(s.loads.committed for s in steps),
                          accepted_drafts=sum(s.loads.accepted_drafts for s in steps),
                          rejected_drafts=sum(s.loads.rejected_drafts for s in steps)),
        decode_seconds=sum(s.seconds for s in steps))
