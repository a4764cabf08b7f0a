"""Engine: continuous batching of many requests over one page pool and a two-stage prefix cache.

  submit(prompt, n_new, draft_len) -> id   queue a request (thread-safe between steps)
  step() -> StepReport                     one scheduler step: plan, one forward, commit
  run() -> {id: GenerateReport}            step until every request is done
  cancel(id)                               retire a request at once (thread-safe)
  generate / stream / prefill / generate_many   a batch of one, or submit + run in order
Each step (core/serve/scheduler.py chooses the work): every scheduled request's state is read
from its pages, all of their tokens run in ONE HybridLM.run over a ragged batch (prefill chunks
and replayed tokens as chunked / recurrent groups of their own, decode tokens as one recurrent
group, verify windows grouped by length), and each request commits its share back to its pages:
  prefill  the chunk's MLA latents and final KDA states are stored; the prompt's full blocks
           and the KDA checkpoint groups captured at retained boundaries are published (ready
           when the step ends, so a request in the same step cannot match them); the chunk
           that completes the prompt emits the first byte (its PrefillReport)
  decode   the argmax is emitted and becomes the pending byte
  verify   accept the leading drafts the model agrees with, commit n + 1 positions (KDA by
           replay, MLA pages past the accepted length released: core/serve/speculative.py)
  replay   after a preemption, emitted bytes are fed again with decode's arithmetic
A finished or cancelled request's pages go back; what the prefix cache retains stays, and a
prefix one request published is reused by the next while the first is still decoding.

Knobs (constructor; defaults in DEFAULTS): max_batch 16 running requests; max_step_tokens 512
tokens a step; prefill_chunk 256 (a multiple of 64, the KDA chunk); policy "mixed" (decode
first, prefill fills the rest) or "prefill_first" (nano-vllm); admission "reserve" (every page
a request can need must be available: it never runs short) or "optimistic" (pages as needed,
the newest request preempted by recompute when the pool runs dry); invariant True (kernels
whose row bits do not depend on the batch: core/model/kernels.py) or False (torch's fastest);
max_waiting 64 queued requests, beyond which submit raises EngineBusy and nothing queued is
lost. A request that could never fit the pool raises OutOfPages at submit.

Oracle (tests/core/serve/test_batching.py): with invariant kernels and stock top-k routing,
every request's bytes equal HybridLM.generate(prompt, n_new) byte for byte, whatever else is in
the batch, in whatever order requests arrive, for every knob and draft_len, and through
preemptions; the pool's check() and the scheduler's invariants hold after every step.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Iterable, Iterator

import torch

from core.errors import ParamError, check_choice, check_int
from core.model.clock import tally
from core.model.kernels import FAST, INVARIANT
from core.model.model import HybridLM
from core.model.providers import ExpertProvider
from core.paging.ledger import toy_geometry
from core.paging.pool import PagePool
from core.prefix.cache import PrefixCache
from core.prefix.hashing import check_prompt
from core.serve.batch import StepBatch
from core.serve.drafter import Drafter, PromptLookup
from core.serve.limits import KDA_CHUNK, MAX_DRAFT, MAX_NEW, MAX_PROMPT
from core.serve.memory import ADMISSIONS, Memory
from core.serve.reports import (
    DecodeStep,
    GenerateReport,
    PrefillReport,
    StepReport,
    StepSeconds,
    Timing,
    VerifyStep,
)
from core.serve.request import Request, Status
from core.serve.scheduler import POLICIES, Scheduler
from core.serve.speculative import LoadLog, propose, summarize

DEFAULTS = {"max_batch": 16, "max_step_tokens": 512, "prefill_chunk": 256, "policy": "mixed",
            "admission": "reserve", "invariant": True, "max_waiting": 64}
Event = PrefillReport | DecodeStep | VerifyStep | GenerateReport


class EngineBusy(RuntimeError):
    """The waiting queue is full; nothing already queued was lost."""


class Engine:
    def __init__(self, model: HybridLM, pool_pages: int, tokens_per_page: int = 64,
                 checkpoint_every: int = 1, prefix_cache: bool = True,
                 provider: ExpertProvider | None = None,
                 drafter: Drafter | None = None, adaptive_drafts: bool = True, *,
                 max_batch: int = DEFAULTS["max_batch"],
                 max_step_tokens: int = DEFAULTS["max_step_tokens"],
                 prefill_chunk: int = DEFAULTS["prefill_chunk"],
                 policy: str = DEFAULTS["policy"], admission: str = DEFAULTS["admission"],
                 invariant: bool = DEFAULTS["invariant"],
                 max_waiting: int = DEFAULTS["max_waiting"]) -> None:
        if not isinstance(model, HybridLM):
            raise ParamError(f"model must be a HybridLM, got {type(model).__name__}")
        self.P = check_int("tokens_per_page", tokens_per_page, KDA_CHUNK, 1024)
        if self.P % KDA_CHUNK:
            raise ParamError(f"tokens_per_page must be a multiple of {KDA_CHUNK} (the KDA chunk, "
                             f"where checkpoints are exact), got {self.P}")
        self.checkpoint_every = check_int("checkpoint_every", checkpoint_every, 1, 1 << 20)
        self.model, self.dims = model, model.dims
        self.provider = provider
        if drafter is not None and not isinstance(drafter, Drafter):
            raise ParamError(f"drafter must have propose(history, n) -> bytes, "
                             f"got {type(drafter).__name__}")
        self.drafter: Drafter = drafter or PromptLookup()
        for name, flag in (("adaptive_drafts", adaptive_drafts), ("invariant", invariant),
                           ("prefix_cache", prefix_cache)):
            if not isinstance(flag, bool):
                raise ParamError(f"{name} must be True or False, got {flag!r}")
        self.adaptive_drafts = adaptive_drafts  # the draft budget follows acceptance
        self.kernels = INVARIANT if invariant else FAST
        chunk = check_int("prefill_chunk", prefill_chunk, KDA_CHUNK, 1 << 16)
        if chunk % KDA_CHUNK:
            raise ParamError(f"prefill_chunk must be a multiple of {KDA_CHUNK} (the KDA chunk: "
                             f"a token's bits must not depend on the chunking), got {chunk}")
        self.max_waiting = check_int("max_waiting", max_waiting, 1, 1 << 16)
        page_bytes = self.P * self.dims.mla_bytes_per_token
        smallest = toy_geometry(self.dims, self.P).pages(1)  # one token: the KDA state + 1 page
        self.pool = PagePool(check_int("pool_pages", pool_pages, smallest, 1 << 20), page_bytes)
        self.cache = PrefixCache(self.pool, self.dims, self.P) if prefix_cache else None
        self.memory = Memory(self.pool, self.dims, self.P, self.cache, self.checkpoint_every,
                             check_choice("admission", admission, ADMISSIONS))
        self.scheduler = Scheduler(
            self.memory, max_batch=check_int("max_batch", max_batch, 1, 1024),
            max_step_tokens=check_int("max_step_tokens", max_step_tokens, KDA_CHUNK, 1 << 20),
            prefill_chunk=chunk, policy=check_choice("policy", policy, POLICIES),
            window=self._window)
        self.steps = 0
        self._lock = threading.RLock()
        self._next = 0
        self._requests: dict[int, Request] = {}  # waiting or running
        self._done: dict[int, Request] = {}  # finished, report not yet collected
        self._cancelled: list[int] = []  # since the last step
        self.diverged = 0  # recomputed prompts whose next byte disagreed (FAST kernels only)

    def __deepcopy__(self, memo: dict[int, object]) -> Engine:
        """An independent copy (pool, prefix cache, queues); pass the model in memo to share
        it. The copy gets a lock of its own."""
        new = Engine.__new__(Engine)
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            setattr(new, k, threading.RLock() if k == "_lock" else copy.deepcopy(v, memo))
        return new

    # ---- requests --------------------------------------------------------------------------
    def submit(self, prompt: bytes, n_new: int, draft_len: int = 0, *,
               check_groups: bool = True, salt: bytes | None = None) -> int:
        """Queue a request; returns its id. Raises ParamError for bad input, OutOfPages if it
        could never fit the pool, EngineBusy when max_waiting requests already wait. `salt`
        seeds its prefix hashes: it reuses and publishes prefixes only among requests with the
        same salt (None: the cache's own, shared by every request without one)."""
        prompt = _check(prompt)
        if salt is not None and not isinstance(salt, bytes):
            raise ParamError(f"salt must be bytes or None, got {type(salt).__name__}")
        n_new = check_int("n_new", n_new, 0, MAX_NEW)
        draft_len = check_int("draft_len", draft_len, 0, MAX_DRAFT)
        self.memory.check_fits(prompt, n_new)
        with self._lock:
            if len(self.scheduler.waiting) >= self.max_waiting:
                raise EngineBusy(f"the engine is busy: {len(self.scheduler.waiting)} requests "
                                 f"waiting (max_waiting={self.max_waiting}); try again later")
            rid = self._next
            self._next += 1
            req = Request(rid, prompt, n_new, draft_len, self.steps, time.perf_counter(),
                          check_groups, salt)
            self._requests[rid] = req
            self.scheduler.waiting.append(req)
            return rid

    def cancel(self, rid: int) -> bool:
        """Retire request rid at once: its pages go back, nothing it had not committed was
        published. False if it had already finished; ParamError for an unknown id."""
        with self._lock:
            if isinstance(rid, bool) or not isinstance(rid, int) or (
                    rid not in self._requests and rid not in self._done):
                raise ParamError(f"id must be a request of this engine, got {rid!r}")
            req = self._requests.pop(rid, None)
            if req is None:
                return False
            if req.status is Status.RUNNING:
                self.memory.retire(req)
                self.scheduler.running.remove(req)
            else:
                self.scheduler.waiting.remove(req)
            req.status = Status.CANCELLED
            self._cancelled.append(rid)
            return True

    def take(self, rid: int) -> list[Event]:
        """Request rid's events since the last take (its GenerateReport last, once done: then
        the engine forgets it)."""
        with self._lock:
            req = self._requests.get(rid) or self._done.pop(rid, None)
            if req is None:
                raise ParamError(f"id must be a live or finished request, got {rid!r}")
            out, req.events = req.events, []
            return out

    @property
    def waiting(self) -> int:
        return len(self.scheduler.waiting)

    @property
    def running(self) -> int:
        return len(self.scheduler.running)

    def idle(self) -> bool:
        with self._lock:
            return not self.scheduler.waiting and not self.scheduler.running

    # ---- convenience -----------------------------------------------------------------------
    def run(self) -> dict[int, GenerateReport]:
        """Step until no request waits or runs; every finished request's report, by id."""
        while not self.idle():
            self.step()
        with self._lock:
            out = {rid: req.report for rid, req in self._done.items()}
            self._done.clear()
            return out

    def generate_many(self, prompts: Iterable[bytes], n_new: int, draft_len: int = 0
                      ) -> list[GenerateReport]:
        """Submit every prompt, then run; the reports in the prompts' order."""
        ids = [self.submit(p, n_new, draft_len) for p in prompts]
        done = self.run()
        return [done[i] for i in ids]

    def generate(self, prompt: bytes, n_new: int, draft_len: int = 0) -> GenerateReport:
        """Prefill, then n_new greedy bytes over the pages; draft_len > 0 decodes
        speculatively with up to draft_len drafts per verify pass (the same bytes)."""
        *_, report = self.stream(prompt, n_new, draft_len)
        return report

    def stream(self, prompt: bytes, n_new: int, draft_len: int = 0) -> Iterator[Event]:
        """generate, as it happens: PrefillReport (it emits the first byte), then a DecodeStep
        per later byte (draft_len 0) or a VerifyStep per verify pass, then the GenerateReport.
        Bad input raises here, before any work. Closing the iterator early (a Stop button)
        cancels the request: its pages go back, the prefix cache keeps what was published."""
        return self._follow(self.submit(prompt, n_new, draft_len))

    def _follow(self, rid: int) -> Iterator[Event]:
        done = False
        try:
            while not done:
                for ev in self.take(rid):
                    done = isinstance(ev, GenerateReport)
                    yield ev
                if not done:
                    self.step()
        finally:
            if not done:
                with self._lock:
                    if rid in self._requests:
                        self.cancel(rid)
                    self._done.pop(rid, None)

    def prefill(self, prompt: bytes, check_groups: bool = True) -> PrefillReport:
        """Serve a prompt's prefill and retire it (what the cache retains stays)."""
        rid = self.submit(prompt, 0, check_groups=check_groups)
        while rid in self._requests:
            self.step()
        return self.take(rid)[-1].prefill

    def check(self) -> None:
        """The pool's, the prefix cache's and the scheduler's invariants."""
        with self._lock:
            self.memory.check()
            self.scheduler.check(set(self._done))

    # ---- one step --------------------------------------------------------------------------
    def _window(self, req: Request, room: int) -> tuple[int, ...]:
        if not req.draft_len:
            return (req.tokens[-1],)
        t0 = time.perf_counter()
        window = propose(req, self.drafter, self.dims.vocab, room)
        req.draft_seconds = time.perf_counter() - t0
        return window

    @torch.no_grad()
    def step(self) -> StepReport:
        """One scheduler step (module docstring)."""
        with self._lock:
            self.steps += 1
            t0 = time.perf_counter()
            plan = self.scheduler.plan()
            for rid in plan.admitted:
                req = self._requests[rid]
                if req.admitted_step is None:
                    req.admitted_step, req.admitted_time = self.steps, t0
                    req.first_admission = req.admission
            t1 = time.perf_counter()
            batch = StepBatch(plan.items, self.memory)
            t2 = time.perf_counter()
            loads = LoadLog(self.provider)
            with tally() as inside:
                out = self.model.run(batch.groups, self.provider,
                                     self.kernels) if batch.groups else None
            t3 = time.perf_counter()
            done = batch.commit(out, step=self.steps, started=t0, verify_seconds=t3 - t1,
                                adaptive=self.adaptive_drafts, misses=loads.misses())
            self.diverged += done.diverged
            for req in done.finished:
                self._finish(req)
            if self.cache is not None:
                self.cache.commit_step()
            t4 = time.perf_counter()
            forward = t3 - t2
            attention = inside.get("attention", 0.0)
            experts = inside.get("expert_loads", 0.0)
            cancelled, self._cancelled = tuple(self._cancelled), []
            return StepReport(
                index=self.steps, work=done.work, admitted=tuple(plan.admitted),
                preempted=tuple(plan.preempted), finished=tuple(r.id for r in done.finished),
                cancelled=cancelled,
                budget=self.scheduler.max_step_tokens,
                experts=tuple(r.order for r in out.routing) if out is not None else (),
                routes=tuple(r.ids for r in out.routing) if out is not None else (),
                waiting=len(self.scheduler.waiting), running=len(self.scheduler.running),
                pages=self.memory.usage(), seconds=StepSeconds(
                    schedule=t1 - t0, pages=t2 - t1 + done.write_seconds,
                    dense=forward - attention - experts, attention=attention,
                    expert_loads=experts, other=t4 - t3 - done.write_seconds))

    def _finish(self, req: Request) -> None:
        now = time.perf_counter()
        req.status = Status.FINISHED
        req.finished_step, req.finished_time = self.steps, now
        pages = self.memory.usage(req)
        self.memory.retire(req)
        self.scheduler.running.remove(req)
        del self._requests[req.id]
        first = req.first_time if req.first_time is not None else now
        report = GenerateReport(
            text=req.output, prefill=req.prefill, steps=tuple(req.decode_steps), pages=pages,
            verify=tuple(req.verify_steps),
            spec=summarize(req.verify_steps, req.draft_len) if req.draft_len else None,
            request=req.id, timing=Timing(
                submitted_step=req.submitted_step, admitted_step=req.admitted_step,
                first_step=req.first_step if req.first_step is not None else self.steps,
                finished_step=self.steps, ttft=first - req.submitted_time,
                total=now - req.submitted_time),
            preemptions=req.preemptions, recomputed_tokens=req.recomputed)
        req.report = report
        req.events.append(report)
        self._done[req.id] = req


def _check(prompt: object) -> bytes:
    prompt = check_prompt(prompt)
    if not 1 <= len(prompt) <= MAX_PROMPT:
        raise ParamError(f"prompt must have 1 to {MAX_PROMPT:,} bytes, got {len(prompt)}")
    return prompt
