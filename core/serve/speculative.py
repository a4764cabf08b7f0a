"""Speculative decoding over the engine's pages: draft, verify in one pass, accept, roll back.

One verify step, with `start` tokens stored and the pending token p (the model's last argmax,
emitted but not yet fed), g bytes generated of n_new:
  draft    the drafter proposes up to m = min(budget, n_new - g - 1) bytes (so the window never
           runs past the request's admitted prompt + n_new tokens); the budget starts at gamma
           and, with adaptive drafts (the default), grows by 2 after a fully accepted window and
           shrinks by 1 (not below 1) after a rejection, so text that does not repeat itself
           costs short windows instead of long wasted ones. No proposal: a one-token window,
           which is HybridLM.step itself
  verify   the state is loaded from the pages and the window [p, d_1 .. d_m] runs in one pass
           (core.serve.verify: the step's arithmetic, bit for bit); MLA pages are grown for the
           window and its tentative latents written into them; the expert cache serves all
           m + 1 positions in one visit per layer
  accept   n = the leading drafts equal to the model's argmax; emitted: d_1 .. d_n and the
           model's token after them (the new pending token)
  commit   the first n + 1 positions: KDA restores the committed S and replays the accepted raw
           inputs (verify_and_replay), the conv tail rolls back with it, MLA keeps n + 1 latents;
           the state is stored and MLA pages past the accepted length go back to the pool
So the emitted bytes are exactly plain greedy decoding's. Nothing is published to the prefix
cache here (only prompts are), so rejected work never reaches it.
Expert loads are the cache's misses during the verify pass, each charged to the first window
position that needed the expert (pending token, accepted draft, rejected draft).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import torch

from core.errors import ParamError
from core.experts import ExpertCache
from core.model.experts import ExpertProvider
from core.model.layers import KDAState
from core.model.model import DecodeState
from core.model.moe import Routing
from core.serve.reports import ExpertLoads, SpecSummary, VerifyStep
from core.serve.verify import KDAWindow, Window, commit, verify_window

if TYPE_CHECKING:
    from core.serve.engine import _Request


class LoadLog:
    """Expert-cache misses between two marks, from the cache's event log (None: no cache)."""

    def __init__(self, provider: ExpertProvider | None) -> None:
        cache = getattr(provider, "cache", None)
        self.cache = cache if isinstance(cache, ExpertCache) else None
        self.seen = 0

    def mark(self) -> int:
        if self.cache is not None:
            ev = self.cache.events(self.seen)
            if ev:
                self.seen = ev[-1].seq
        return self.seen

    def attribute(self, since: int, routing: tuple[Routing, ...], accepted: int) -> ExpertLoads:
        """Misses after `since`, by the first window position whose top-k held the expert."""
        if self.cache is None:
            return ExpertLoads(committed=0, accepted_drafts=0, rejected_drafts=0)
        ev = self.cache.events(since)
        if ev:
            self.seen = ev[-1].seq
        owners: list[dict[int, int]] = []
        for r in routing:
            first: dict[int, int] = {}
            for pos, row in enumerate(r.ids.tolist()):
                for e in row:
                    first.setdefault(e, pos)
            owners.append(first)
        counts = [0, 0, 0]
        for e in ev:
            if e.op == "miss" and 0 <= e.layer < len(owners) and e.expert in owners[e.layer]:
                pos = owners[e.layer][e.expert]
                counts[0 if pos == 0 else 1 if pos <= accepted else 2] += 1
        return ExpertLoads(committed=counts[0], accepted_drafts=counts[1],
                           rejected_drafts=counts[2])


def speculate(req: _Request, logits: torch.Tensor, n_new: int, gamma: int
              ) -> Iterator[VerifyStep]:
    """Verify steps until n_new bytes exist; the first byte is argmax(logits) (the prefill's)."""
    eng, seq = req.eng, req.seq
    if n_new == 0:
        return
    pending = int(logits.argmax(-1))
    history = bytearray(req.tokens)
    history.append(pending)
    generated, index, budget = 1, 0, gamma
    loads = LoadLog(eng.provider)
    loads.mark()
    while generated < n_new:
        t0 = time.perf_counter()
        m = min(budget, n_new - generated - 1)
        drafts = _drafts(eng.drafter.propose(history, m), m, eng.dims.vocab) if m else []
        t1 = time.perf_counter()
        window = [pending, *drafts]
        start = seq.length
        state = seq.load(req.tokens)
        since = loads.mark()
        win = verify_window(eng.model, window, state, eng.provider)
        grown = req.grow(start + len(window))
        mla = 0
        for rec in win.layers:
            if isinstance(rec, torch.Tensor):  # tentative latents go into the pages
                seq.write_latents(mla, rec[0], start)
                mla += 1
        t2 = time.perf_counter()
        greedy = win.greedy()
        n = 0
        while n < len(drafts) and drafts[n] == greedy[n]:
            n += 1
        emitted = (*drafts[:n], greedy[n])
        if drafts and eng.adaptive_drafts:
            budget = min(gamma, budget + 2) if n == len(drafts) else max(1, budget - 1)
        held = _rollback_bytes(state, win, n + 1 if n < len(drafts) else 0)
        replayed = commit(state, win, n + 1)
        seq.store(state)
        req.tokens.extend(window[: n + 1])
        released = req.release_past(seq.length)
        step_loads = loads.attribute(since, win.routing, n)
        pending = emitted[-1]
        history.extend(emitted)
        generated += len(emitted)
        t3 = time.perf_counter()
        yield VerifyStep(
            index=index, start=start, window=tuple(window), drafted=len(drafts), accepted=n,
            emitted=emitted, replayed=replayed, replay_bytes=held[0], snapshot_bytes=held[1],
            replay_moved=held[2],
            pages_grown=grown, pages_released=released, loads=step_loads,
            draft_seconds=t1 - t0, verify_seconds=t2 - t1, commit_seconds=t3 - t2,
            length=seq.length, pages=req.usage())
        index += 1


def _drafts(proposal: object, m: int, vocab: int) -> list[int]:
    """A drafter's proposal as ids, at most m of them (a drafter is only a guesser)."""
    if not isinstance(proposal, (bytes, bytearray)):
        raise ParamError(f"drafter.propose must return bytes, got {type(proposal).__name__}")
    ids = list(proposal[:m])
    if any(t >= vocab for t in ids):
        raise ParamError(f"drafts must be ids in [0, {vocab - 1}], got {ids}")
    return ids


def _rollback_bytes(state: DecodeState, win: Window, replayed: int) -> tuple[int, int, int]:
    """Summed over the KDA layers (state: the committed one, before commit):
    held by replay (raw inputs + pre-conv rows of the window's positions), held by snapshots
    (S + conv tail per position), moved by this rollback (the committed S read and the new S
    written, plus the replayed positions' raw inputs read; 0 when the window was kept whole)."""
    replay = snapshot = moved = 0
    for s, rec in zip(state.layers, win.layers, strict=True):
        if isinstance(s, KDAState) and isinstance(rec, KDAWindow) and rec.drafts is not None:
            replay += rec.replay_bytes
            S = s.S.numel() * s.S.element_size()
            snapshot += win.size * (S + s.conv.numel() * s.conv.element_size())
            if replayed:
                moved += 2 * S + replayed * rec.replay_bytes // win.size
    return replay, snapshot, moved


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
