"""StepBatch: one engine step's work as HybridLM.run groups, and each result committed back.

  load     the plan's items become groups: each prefill chunk alone (chunked KDA, its capture
           points, logits only for the chunk that ends the prompt); every decode token of every
           request together (recurrent, one row each); verify windows by length (recurrent,
           their KDA raw inputs kept for rollback); replays by length. Each request's state is
           read from its pages, one indexed copy per layer (core/paging/batch.py).
  commit   after the forward, each request's share goes back to its pages and its record:
             prefill  MLA latents and final KDA states stored; the prompt's full blocks and the
                      checkpoint groups captured in the chunk published; the chunk that ends the
                      prompt emits the first byte (the request's PrefillReport)
             decode   the argmax emitted (a DecodeStep)
             verify   accepted drafts + the model's next byte emitted; KDA committed by replay,
                      MLA pages past the accepted length released (a VerifyStep)
             replay   the recomputed tokens stored, nothing emitted
           Requests that emitted their last byte come back in `Committed.finished`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import torch

from core.model.layers import KDAOut, KDAState
from core.model.model import BatchOut, Group, GroupOut
from core.paging import batch as paged
from core.serve.memory import Memory
from core.serve.reports import DecodeStep, PrefillReport, VerifyStep, Work
from core.serve.request import Request
from core.serve.scheduler import Item
from core.serve.speculative import LoadLog, accept, rollback_bytes
from core.serve.verify import commit_kda


@dataclass(slots=True)
class _Loaded:
    """A model group and the requests behind it, with the states they started from."""

    items: list[Item]
    group: Group
    kda: list[KDAState]  # per KDA layer: the G requests' states before the step


@dataclass(frozen=True, slots=True, kw_only=True)
class Committed:
    work: tuple[Work, ...]
    finished: tuple[Request, ...]  # emitted their last byte this step
    write_seconds: float  # storing states and publishing prefixes
    diverged: int  # recomputed prompts whose next byte disagreed (FAST kernels only)


class StepBatch:
    def __init__(self, items: list[Item], memory: Memory) -> None:
        self.memory = memory
        self.loaded = self._load(items, memory)

    @property
    def groups(self) -> list[Group]:
        return [b.group for b in self.loaded]

    @staticmethod
    def _load(items: list[Item], memory: Memory) -> list[_Loaded]:
        keyed: dict[tuple[object, ...], list[Item]] = {}
        for it in items:
            if it.kind == "prefill":
                key: tuple[object, ...] = ("prefill", it.request.id)
            else:
                key = ("recurrent", len(it.tokens), it.kind == "replay")
            keyed.setdefault(key, []).append(it)
        loaded = []
        for key, its in keyed.items():
            seqs = [it.request.seq for it in its]
            kda, states = paged.read_kda(seqs), []
            mla = nk = 0
            for kind in memory.dims.layer_kinds:
                if kind == "kda":
                    states.append(kda[nk])
                    nk += 1
                else:
                    states.append(paged.read_latents(seqs, mla, [it.start for it in its]))
                    mla += 1
            tokens = torch.tensor([list(it.tokens) for it in its])  # [G, T]
            if key[0] == "prefill":
                it = its[0]
                last = it.end == len(it.request.prompt)
                group = Group(tokens=tokens, states=states, logits="last" if last else "none",
                              capture_at=memory.capture_points(it.request, it.start, it.end))
            else:
                group = Group(tokens=tokens, states=states, recurrent=True,
                              keep_inputs=its[0].kind == "verify",
                              logits="none" if key[2] else "all")
            loaded.append(_Loaded(items=its, group=group, kda=kda))
        return loaded

    # ---- commit ----------------------------------------------------------------------------
    def commit(self, out: BatchOut | None, *, step: int, started: float,
               verify_seconds: float, adaptive: bool, misses: list[tuple[int, int]]
               ) -> Committed:
        """Every request's share of the forward (module docstring). started: when the step
        began; verify_seconds: its load + forward; misses: the expert cache's demand misses."""
        self.step, self.started, self.adaptive = step, started, adaptive
        self.verify_seconds, self.misses = verify_seconds, misses
        self.owners = LoadLog.first_rows(out.routing) if misses and out is not None else []
        self.writes, self.diverged = 0.0, 0
        work: list[Work] = []
        finished: list[Request] = []
        row = 0
        for b, g in zip(self.loaded, out.groups if out is not None else (), strict=True):
            self._group(b, g, row, work, finished)
            row += b.group.tokens.numel()
        return Committed(work=tuple(work), finished=tuple(finished),
                         write_seconds=self.writes, diverged=self.diverged)

    def _group(self, b: _Loaded, g: GroupOut, row: int, work: list[Work],
               finished: list[Request]) -> None:
        kda_out = [o for o in g.layers if isinstance(o, KDAOut)]
        mla_out = [o for o in g.layers if not isinstance(o, KDAOut)]
        seqs = [it.request.seq for it in b.items]
        T = b.group.tokens.shape[1]
        greedy = g.logits.argmax(-1).tolist() if g.logits is not None and T > 1 else []
        firsts = g.logits[:, 0].argmax(-1).tolist() if g.logits is not None and T == 1 else []
        accepted = {i: accept(it.request, it.tokens, greedy[i], self.adaptive)[0]
                    for i, it in enumerate(b.items) if it.kind == "verify" and T > 1}
        t0 = time.perf_counter()
        states = []
        for layer, rec in enumerate(kda_out):
            if accepted:  # verify windows: commit n + 1 positions (KDA by replay)
                pairs = [commit_kda(b.kda[layer].S[i : i + 1], b.kda[layer].conv[i : i + 1],
                                    rec.row(i), accepted[i] + 1) for i in range(len(b.items))]
                states.append((torch.cat([p[0] for p in pairs]),
                               torch.cat([p[1] for p in pairs])))
            else:
                states.append((rec.S, rec.conv))
        paged.write_kda(seqs, states)
        for layer, new in enumerate(mla_out):
            paged.write_latents(seqs, layer, [it.start for it in b.items], list(new.unbind(0)))
        self.writes += time.perf_counter() - t0
        for i, it in enumerate(b.items):
            req = it.request
            if it.kind == "prefill":
                w = self._prefill(it, g, kda_out)
            elif it.kind == "replay":
                req.fed = it.end
                req.recomputed += len(it.tokens)
                w = Work(request=req.id, kind="replay", start=it.start, tokens=len(it.tokens))
            elif it.kind == "verify":
                rows = greedy[i] if greedy else [firsts[i]]
                w = self._verify(it, i, accepted.get(i, 0), rows, b, kda_out, row)
            else:
                tok = firsts[i]
                req.fed = it.end
                req.tokens.append(tok)
                st = DecodeStep(len(req.decode_steps), tok, time.perf_counter() - self.started,
                                req.fed)
                req.decode_steps.append(st)
                req.events.append(st)
                w = Work(request=req.id, kind="decode", start=it.start, tokens=1,
                         emitted=bytes([tok]))
            req.high = max(req.high, req.fed)
            req.seq.length = req.fed  # the tokens its pages hold
            work.append(replace(w, rows=(row + i * T, row + (i + 1) * T)))
            if req.emitted >= req.n_new and req.fed >= len(req.prompt):
                finished.append(req)

    def _prefill(self, it: Item, g: GroupOut, kda_out: list[KDAOut]) -> Work:
        req = it.request
        t0 = time.perf_counter()
        captured = [[rec.captured[j] for rec in kda_out]
                    for j in range(len(kda_out[0].captured))] if kda_out else []
        self.memory.publish(req, it.start, it.end, captured)
        self.writes += time.perf_counter() - t0
        req.recomputed += max(0, min(it.end, req.high) - it.start)
        req.fed = it.end
        req.chunks += 1
        emitted = b""
        if req.fed == len(req.prompt):
            logits = g.logits[0]  # [V]
            if req.prefill is None:
                adm = req.first_admission
                req.prefill = PrefillReport(
                    last_logits=logits, prompt_tokens=len(req.prompt),
                    reused_tokens=adm.reused_tokens,
                    computed_tokens=len(req.prompt) - adm.reused_tokens, lookup=adm.lookup,
                    seconds=time.perf_counter() - req.admitted_time,
                    published_blocks=req.published[0], published_groups=req.published[1],
                    pages=self.memory.usage(req), chunks=req.chunks)
                req.events.append(req.prefill)
                if req.n_new:
                    tok = int(logits.argmax(-1))
                    req.tokens.append(tok)
                    req.first_step, req.first_time = self.step, time.perf_counter()
                    emitted = bytes([tok])
            elif req.emitted and int(logits.argmax(-1)) != req.tokens[len(req.prompt)]:
                self.diverged += 1  # a recompute that disagrees: only possible with FAST
        return Work(request=req.id, kind="prefill", start=it.start, tokens=len(it.tokens),
                    emitted=emitted)

    def _verify(self, it: Item, i: int, n: int, greedy: list[int], b: _Loaded,
                kda_out: list[KDAOut], row: int) -> Work:
        req = it.request
        t0 = time.perf_counter()
        T = len(it.tokens)
        emitted = (*it.tokens[1 : n + 1], greedy[n])
        before = [KDAState(s.conv[i : i + 1], s.S[i : i + 1]) for s in b.kda]
        replayed = n + 1 if n + 1 < T else 0
        held = rollback_bytes(before, [rec.row(i) for rec in kda_out], T, replayed)
        req.tokens.extend(emitted)
        req.fed = it.start + n + 1
        released = self.memory.release_past(req, req.fed)
        loads = LoadLog.charge(self.misses, self.owners, row + i * T, T, n)
        st = VerifyStep(
            index=len(req.verify_steps), start=it.start, window=it.tokens, drafted=T - 1,
            accepted=n, emitted=emitted, replayed=replayed,
            replay_bytes=held[0], snapshot_bytes=held[1], replay_moved=held[2],
            pages_grown=it.grown, pages_released=released, loads=loads,
            draft_seconds=req.draft_seconds, verify_seconds=self.verify_seconds,
            commit_seconds=time.perf_counter() - t0, length=req.fed,
            pages=self.memory.usage(req))
        req.verify_steps.append(st)
        req.events.append(st)
        return Work(request=req.id, kind="verify", start=it.start, tokens=T,
                    emitted=bytes(emitted), drafted=T - 1, accepted=n)
