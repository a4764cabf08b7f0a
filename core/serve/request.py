"""Request: one sequence's life in the engine, shared by the scheduler, the speculative path and
the reports (nano-vllm's Sequence).

State, in tokens: `tokens` is the prompt then every emitted byte; the model state stored in the
request's pages covers tokens[:fed]. The last emitted byte is pending (emitted, not yet fed),
so once decoding, fed == len(tokens) - 1. Phases, by what the next step feeds:
  prefill  fed < len(prompt): the next prompt chunk (chunked KDA; chunks end on multiples of
           64 from the prompt's start, so a token's bits never depend on the chunking). The
           chunk that completes the prompt emits the first byte.
  replay   len(prompt) <= fed < len(tokens) - 1: after a preemption, the emitted bytes before
           the pending one, recomputed with decode's arithmetic (kda_step per token), emitting
           nothing: the state is then bit for bit the one that was dropped.
  decode   fed == len(tokens) - 1: the pending byte (and, with draft_len > 0, up to draft_len
           drafts in one verify window); emits the next byte(s).
Status: WAITING (queued, or preempted: no pages) -> RUNNING (pages, scheduled each step) ->
FINISHED (n_new bytes emitted) or CANCELLED; a preempted request goes back to WAITING with its
emitted bytes kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from core.paging.sequence import PagedSequence
from core.prefix.entries import Lease, LookupResult
from core.serve.reports import DecodeStep, PrefillReport, VerifyStep


class Status(Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True, kw_only=True)
class Admission:
    """What admitting a request found: the prefix reuse and the pages it holds for the rest."""

    lookup: LookupResult | None  # None with the prefix cache off
    reused_tokens: int
    reserved_pages: int  # admission="reserve": pages set aside for the request's growth
    reuse_dropped: bool = False  # the prefix was reusable, but only running without it fit


class Request:
    """One request: its bytes, its phase, its pages and lease, what it has done so far."""

    def __init__(self, rid: int, prompt: bytes, n_new: int, draft_len: int, step: int,
                 time: float, check_groups: bool = True, salt: bytes | None = None) -> None:
        self.id, self.prompt, self.n_new, self.draft_len = rid, prompt, n_new, draft_len
        self.salt = salt  # seeds its prefix hashes (None: the cache's own, shared by all)
        self.check_groups = check_groups  # False: the unsafe lookup a demo shows
        self.tokens: list[int] = list(prompt)
        self.fed = 0
        self.status = Status.WAITING
        self.seq: PagedSequence | None = None
        self.lease: Lease | None = None
        self.admission: Admission | None = None  # the latest admission
        self.reserved = 0  # pages still set aside for this request (admission="reserve")
        self.budget = draft_len  # the adaptive draft budget (core.serve.speculative)
        # It preempted itself (the pool ran dry with nothing newer to preempt): its next
        # admission recomputes its prompt instead of pinning the prefix it reused, which may be
        # what left no room (else it would be admitted, pin it and preempt itself again).
        self.reuse_off = False
        self.preemptions = 0
        self.recomputed = 0  # tokens fed again after preemptions
        self.submitted_step, self.submitted_time = step, time
        self.admitted_step: int | None = None
        self.first_step: int | None = None  # the step that emitted the first byte
        self.first_time: float | None = None
        self.finished_step: int | None = None
        self.finished_time: float | None = None
        self.prefill: PrefillReport | None = None
        self.decode_steps: list[DecodeStep] = []
        self.verify_steps: list[VerifyStep] = []
        self.published = [0, 0]  # blocks, groups published by this request's prefills
        self.first_admission: Admission | None = None
        self.admitted_time = 0.0
        self.high = 0  # the most tokens ever stored (below it, feeding again is recomputing)
        self.chunks = 0  # prefill chunks run
        self.draft_seconds = 0.0  # the drafter's time for the pending verify window
        self.events: list[object] = []  # what stream() has not yet handed out
        self.report: object | None = None  # the GenerateReport, once finished

    # ---- phase -----------------------------------------------------------------------------
    @property
    def emitted(self) -> int:
        return len(self.tokens) - len(self.prompt)

    @property
    def output(self) -> bytes:
        return bytes(self.tokens[len(self.prompt):])

    @property
    def phase(self) -> str:
        if self.fed < len(self.prompt):
            return "prefill"
        return "replay" if self.fed < len(self.tokens) - 1 else "decode"

    @property
    def done(self) -> bool:
        return self.status in (Status.FINISHED, Status.CANCELLED)

    @property
    def max_tokens(self) -> int:
        """The most tokens its pages can ever hold: the prompt and every emitted byte."""
        return len(self.prompt) + self.n_new

    def __repr__(self) -> str:
        return (f"Request({self.id}, {self.status.value}, {self.phase}, fed={self.fed}, "
                f"emitted={self.emitted}/{self.n_new})")
