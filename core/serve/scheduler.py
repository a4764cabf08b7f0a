"""Scheduler: which requests run in the next step, and how many tokens each feeds.

Two queues (nano-vllm's): `waiting` (FCFS; a preempted request goes back to its head) and
`running` (admitted: holding pages, in admission order). A step has a token budget
(max_step_tokens) and at most max_batch running requests. Work items:
  prefill  a chunk of the prompt; it ends on a multiple of 64 from the prompt's start (or at the
           prompt's end) and is at most prefill_chunk tokens, so a token's bits never depend
           on how its prompt was chunked
  replay   after a preemption, emitted bytes recomputed (decode's arithmetic)
  decode   the pending byte; with draft_len > 0 a verify window [pending, drafts...]
Policies:
  prefill_first  (nano-vllm) a step is all prefill while any prefill work exists: running
                 requests' unfinished chunks first, then admissions from the head of
                 `waiting`; decode runs only when there is none
  mixed          (vLLM V1, Sarathi-Serve) decode tokens and verify windows first, in rotating
                 order so none waits forever; when prefill work is pending they leave it at
                 least one 64-token chunk of the budget; then unfinished chunks; then
                 admissions fill what is left
Admission stops at the first waiting request that cannot be admitted (FCFS, no overtaking)
and in a step that preempted while others still run (no thrash); a step that preempted every
running request admits from the head of `waiting` at once, so no step with work idles.
Growth: each item's MLA pages are taken as it is scheduled; when the pool is dry
(admission="optimistic" only) the newest running request is preempted (its pages freed, its
bytes kept, back to the head of `waiting`), or the item's own request if it is the newest.
A request that preempted itself is admitted next without the prefix it reused
(Request.reuse_off): pinned, that prefix may be what left no room, and reusing it again
would preempt it again, forever. No starvation: the oldest running request is never
preempted for a younger one, and FCFS admission lets no later request in ahead of a waiting
one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from core.model.attention import BLOCK
from core.serve.memory import Memory
from core.serve.request import Request, Status

POLICIES = ("prefill_first", "mixed")


@dataclass(slots=True, kw_only=True)
class Item:
    """One request's work in a step (filled in as the step runs)."""

    request: Request
    kind: str  # "prefill", "replay", "decode" or "verify"
    start: int  # tokens stored before the step
    tokens: tuple[int, ...]  # what this step feeds
    grown: int = 0  # MLA pages allocated for it

    @property
    def end(self) -> int:
        return self.start + len(self.tokens)


@dataclass(slots=True)
class Plan:
    items: list[Item] = field(default_factory=list)
    admitted: list[int] = field(default_factory=list)
    preempted: list[int] = field(default_factory=list)


class Scheduler:
    def __init__(self, memory: Memory, *, max_batch: int, max_step_tokens: int,
                 prefill_chunk: int, policy: str,
                 window: Callable[[Request, int], tuple[int, ...]]) -> None:
        self.memory = memory
        self.max_batch, self.max_step_tokens = max_batch, max_step_tokens
        self.prefill_chunk, self.policy = prefill_chunk, policy
        self.window = window  # (request, room) -> the tokens of its decode / verify pass
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self._turn = 0  # rotates the decode order

    # ---- the step's plan -------------------------------------------------------------------
    def plan(self) -> Plan:
        plan = Plan()
        budget = self.max_step_tokens
        if self.policy == "prefill_first":
            budget = self._prefills(plan, budget)
            if not plan.items:
                self._decodes(plan, budget)
        else:
            pending = (self.waiting and len(self.running) < self.max_batch) or any(
                r.phase != "decode" for r in self.running)
            keep = min(BLOCK, budget - 1) if pending else 0
            used = self._decodes(plan, budget - keep)
            self._prefills(plan, budget - used)
        return plan

    def _decodes(self, plan: Plan, budget: int) -> int:
        """Decode / verify work for running requests in their decode phase; tokens used."""
        ready = [r for r in self.running if r.phase == "decode" and r.emitted < r.n_new]
        if not ready:
            return 0
        self._turn = (self._turn + 1) % len(ready)
        used = 0
        for req in ready[self._turn:] + ready[: self._turn]:
            if budget - used < 1 or req.status is not Status.RUNNING:
                continue
            toks = self.window(req, budget - used)
            item = Item(request=req, kind="verify" if req.draft_len else "decode",
                        start=req.fed, tokens=toks)
            if self._grow(plan, item):
                plan.items.append(item)
                used += len(toks)
        return used

    def _prefills(self, plan: Plan, budget: int) -> int:
        """Unfinished prefill / replay work of running requests, then admissions; the budget
        left."""
        for req in list(self.running):
            if budget <= 0:
                return budget
            if req.phase == "decode" or req.status is not Status.RUNNING:
                continue
            item = self._chunk(req, req.fed, budget)
            if item is not None and self._grow(plan, item):
                plan.items.append(item)
                budget -= len(item.tokens)
        while self.waiting and len(self.running) < self.max_batch and budget > 0 \
                and (not plan.preempted or not self.running):
            req = self.waiting[0]

            def first_end(start: int, req: Request = req, budget: int = budget) -> int | None:
                item = self._chunk(req, start, budget)
                return item.end if item is not None else None

            if not self.memory.admit(req, self.memory.lookup(req), first_end):
                break
            self.waiting.popleft()
            req.status = Status.RUNNING
            self.running.append(req)
            plan.admitted.append(req.id)
            item = self._chunk(req, req.fed, budget)  # from what admission restored
            plan.items.append(item)
            budget -= len(item.tokens)
        return budget

    def _chunk(self, req: Request, start: int, budget: int) -> Item | None:
        """The next prefill chunk or replay run from `start`, within budget (None: none fits)."""
        if start < len(req.prompt):
            end = min(len(req.prompt), start + self.prefill_chunk)
            if end - start > budget:  # cut on a 64-token boundary inside the budget
                end = (start + budget) // BLOCK * BLOCK
                if end <= start:
                    return None
            return Item(request=req, kind="prefill", start=start,
                        tokens=tuple(req.tokens[start:end]))
        end = min(len(req.tokens) - 1, start + self.prefill_chunk, start + budget)
        if end <= start:
            return None
        return Item(request=req, kind="replay", start=start, tokens=tuple(req.tokens[start:end]))

    # ---- pages -----------------------------------------------------------------------------
    def _grow(self, plan: Plan, item: Item) -> bool:
        """Pages for item.end tokens, preempting the newest running requests while the pool
        is dry; False when item's own request had to go."""
        req = item.request
        before = sum(len(t) for t in req.seq.mla_tables)
        while not self.memory.grow(req, item.end):
            victim = self.running[-1]
            self.preempt(victim, plan)
            if victim is req:
                req.reuse_off = True
                return False
        item.grown = sum(len(t) for t in req.seq.mla_tables) - before
        return True

    def preempt(self, req: Request, plan: Plan) -> None:
        self.memory.retire(req)
        req.status = Status.WAITING
        req.preemptions += 1
        req.budget = req.draft_len
        self.running.remove(req)
        self.waiting.appendleft(req)
        plan.preempted.append(req.id)
        plan.items[:] = [it for it in plan.items if it.request is not req]

    # ---- invariants ------------------------------------------------------------------------
    def check(self, finished: set[int]) -> None:
        """Every request in exactly one of waiting / running / finished; bounds respected."""
        w, r = [q.id for q in self.waiting], [q.id for q in self.running]
        if len(set(w)) != len(w) or len(set(r)) != len(r) or set(w) & set(r) \
                or (set(w) | set(r)) & finished:
            raise AssertionError(f"a request in two places: waiting {w}, running {r}")
        if len(r) > self.max_batch:
            raise AssertionError(f"{len(r)} running > max_batch {self.max_batch}")
        if any(q.status is not Status.WAITING or q.seq is not None for q in self.waiting):
            raise AssertionError("a waiting request holds pages or is not WAITING")
        if any(q.status is not Status.RUNNING or q.seq is None for q in self.running):
            raise AssertionError("a running request holds no pages or is not RUNNING")
