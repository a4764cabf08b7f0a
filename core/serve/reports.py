"""What the engine reports: frozen records a figure or a test can read without the engine.

Per request, Engine.stream yields in order: one PrefillReport (when its prompt has been run,
which also emits the first byte), then one DecodeStep per later byte (plain greedy, draft_len
= 0) or one VerifyStep per verify pass (speculative), then the GenerateReport. A VerifyStep
carries what a step timeline draws: its phases' wall times (draft, verify, commit), what was
drafted, accepted and replayed, the bytes held for rollback (replay inputs vs the per-position
snapshots a snapshot scheme would hold), MLA pages grown for the window and released after
it, expert loads by the position that first needed the expert, and the pool.
Per engine step, Engine.step returns a StepReport: every request's share of the step (Work:
a prefill chunk, replayed tokens, a decode token or a verify window, and the bytes it emitted),
admissions, preemptions, finishes, the distinct experts each layer loaded for the whole batch,
pages, and the step's wall time split by where it went (StepSeconds).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from core.prefix.entries import LookupResult


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolUsage:
    """Pages by holder after a phase: the request's own, the prefix cache's, free."""

    request_mla: int
    request_kda: int
    cache_mla: int
    cache_kda: int
    free: int
    total: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefillReport:
    last_logits: torch.Tensor  # [V]: the next token's logits
    prompt_tokens: int
    reused_tokens: int  # skipped: restored from the prefix cache
    computed_tokens: int  # run through the model
    lookup: LookupResult | None  # None with the prefix cache off
    seconds: float  # wall time from admission to the last prompt token (lookup, chunks, publish)
    published_blocks: int
    published_groups: int
    pages: PoolUsage
    chunks: int = 1  # steps the prompt took (prefill_chunk and the step's token budget)


@dataclass(frozen=True, slots=True)
class DecodeStep:
    index: int  # 0 for the first decode step (it emits the second byte: the prefill emits one)
    token: int  # the byte this step emitted
    seconds: float  # the engine step's wall time (shared by the batch)
    length: int  # tokens stored after this step (the emitted byte is pending)


@dataclass(frozen=True, slots=True)
class ExpertLoads:
    """Expert loads (cache misses) of one verify pass, by the first position that needed the
    expert: the pending token, an accepted draft, or a rejected draft (wasted work)."""

    committed: int
    accepted_drafts: int
    rejected_drafts: int

    @property
    def drafted(self) -> int:
        """Loads made for drafted positions."""
        return self.accepted_drafts + self.rejected_drafts

    @property
    def total(self) -> int:
        return self.committed + self.drafted


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyStep:
    """One speculative step: draft, verify the window in one pass, accept, roll back, store."""

    index: int  # 0 for the first verify pass
    start: int  # tokens stored (fed) before the step
    window: tuple[int, ...]  # the fed tokens: the pending token, then the drafts
    drafted: int  # drafts in the window (window length - 1)
    accepted: int  # leading drafts equal to the model's argmax
    emitted: tuple[int, ...]  # accepted drafts + the model's next token (truncated to n_new)
    replayed: int  # positions replayed per KDA layer (0: the whole window was kept)
    replay_bytes: int  # held for rollback, every KDA layer: raw inputs + pre-conv rows
    snapshot_bytes: int  # what a per-position snapshot of S + conv tail would have held
    replay_moved: int  # the rollback's traffic: S read + S written + replayed raw inputs read
    pages_grown: int  # MLA pages allocated for the window's latents
    pages_released: int  # MLA pages past the accepted length returned to the pool
    loads: ExpertLoads
    draft_seconds: float
    verify_seconds: float  # load from pages + the window's forward
    commit_seconds: float  # replay, conv tail, latents, store, page release
    length: int  # tokens stored after the step
    pages: PoolUsage  # after the step

    @property
    def seconds(self) -> float:
        return self.draft_seconds + self.verify_seconds + self.commit_seconds

    @property
    def rejected(self) -> int:
        return self.drafted - self.accepted


@dataclass(frozen=True, slots=True, kw_only=True)
class SpecSummary:
    """Totals of a speculative generation."""

    draft_len: int  # gamma: the most drafts per window
    steps: int  # verify passes
    drafted: int
    accepted: int
    replayed: int  # positions replayed per KDA layer, summed over steps
    replay_bytes: int  # summed over steps
    snapshot_bytes: int
    loads: ExpertLoads  # summed over steps
    decode_seconds: float  # every step's wall time

    @property
    def acceptance(self) -> float:
        """accepted / drafted (0.0 when nothing was drafted)."""
        return self.accepted / self.drafted if self.drafted else 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Timing:
    """When a request passed each mark, in engine steps and in seconds since it was submitted."""

    submitted_step: int
    admitted_step: int
    first_step: int  # the step that emitted its first byte
    finished_step: int
    ttft: float  # seconds to the first byte
    total: float  # seconds to the last byte

    @property
    def steps_to_first(self) -> int:
        """Steps from submission to the first byte, the submission's own step counted."""
        return self.first_step - self.submitted_step


@dataclass(frozen=True, slots=True, kw_only=True)
class GenerateReport:
    text: bytes  # the generated bytes only
    prefill: PrefillReport
    steps: tuple[DecodeStep, ...]  # plain greedy; () when speculative
    pages: PoolUsage  # after the last step, before the request's pages are released
    verify: tuple[VerifyStep, ...] = ()  # speculative; () when plain
    spec: SpecSummary | None = None  # speculative totals; None when plain
    request: int = 0  # the engine's id for the request
    timing: Timing | None = None
    preemptions: int = 0  # times its pages were taken back (admission="optimistic")
    recomputed_tokens: int = 0  # tokens fed again after preemptions

    @property
    def decode_seconds(self) -> float:
        return sum(s.seconds for s in self.steps) + sum(s.seconds for s in self.verify)

    @property
    def tokens_per_second(self) -> float:
        """Generated bytes per second of decode (prefill excluded); 0.0 with nothing decoded."""
        t = self.decode_seconds
        return len(self.text) / t if t > 0 else 0.0

    @property
    def steps_per_byte(self) -> float:
        """Time per output byte, in engine steps: (last byte's step - first's) / (bytes - 1)."""
        if self.timing is None or len(self.text) < 2:
            return 0.0
        return (self.timing.finished_step - self.timing.first_step) / (len(self.text) - 1)

    @property
    def seconds_per_byte(self) -> float:
        """Time per output byte after the first, in seconds (0.0 with fewer than two)."""
        if self.timing is None or len(self.text) < 2:
            return 0.0
        return (self.timing.total - self.timing.ttft) / (len(self.text) - 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class Work:
    """One request's share of an engine step."""

    request: int
    kind: str  # "prefill" (a prompt chunk), "replay", "decode" or "verify"
    start: int  # tokens stored before the step
    tokens: int  # tokens fed this step (the step's budget it used)
    emitted: bytes = b""  # bytes emitted this step
    drafted: int = 0  # verify: drafts in the window
    accepted: int = 0  # verify: drafts accepted
    rows: tuple[int, int] = (0, 0)  # its tokens' rows [start, end) in the step's batch


@dataclass(frozen=True, slots=True, kw_only=True)
class StepSeconds:
    """Where a step's wall time went."""

    schedule: float  # choosing the work, admission, growth, preemption, drafting
    pages: float  # states read from and written to the pool, prefix publication
    dense: float  # the forward's projections, norms, router and expert FFNs
    attention: float  # the sequence mixers' token mixing (KDA recurrence, MLA attention)
    expert_loads: float  # experts fetched through the provider (0 when all resident)
    other: float  # accepting, committing, reports (the rest of the step)

    @property
    def total(self) -> float:
        return (self.schedule + self.pages + self.dense + self.attention + self.expert_loads
                + self.other)


@dataclass(frozen=True, slots=True, kw_only=True)
class StepReport:
    index: int  # 1 for the engine's first step
    work: tuple[Work, ...]
    admitted: tuple[int, ...]
    preempted: tuple[int, ...]
    finished: tuple[int, ...]
    cancelled: tuple[int, ...]  # cancelled since the previous step
    budget: int  # max_step_tokens
    experts: tuple[tuple[int, ...], ...]  # per layer: the distinct experts the batch used
    routes: tuple[torch.Tensor, ...]  # per layer: every row's chosen experts [N, k]
    waiting: int  # after the step
    running: int
    pages: PoolUsage  # after the step (request_*: every running request's pages)
    seconds: StepSeconds

    @property
    def tokens(self) -> int:
        return sum(w.tokens for w in self.work)

    @property
    def distinct_experts(self) -> tuple[int, ...]:
        return tuple(len(e) for e in self.experts)

    def experts_of(self, request: int) -> tuple[tuple[int, ...], ...]:
        """Per layer, the distinct experts request's own tokens chose this step (() for a
        request that did not run)."""
        w = next((w for w in self.work if w.request == request), None)
        if w is None or w.rows[1] <= w.rows[0]:
            return ()
        a, b = w.rows
        return tuple(tuple(sorted(set(ids[a:b].flatten().tolist()))) for ids in self.routes)
