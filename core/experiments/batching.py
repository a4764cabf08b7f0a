"""The Batching tab's experiment: the scheduler stepped through.

`run(max_batch, max_step_tokens, prefill_chunk, policy, admission, pool_pages, spacing,
prefix_cache=True)` serves the workload's requests (core.experiments.batching_workload.ARRIVALS,
request i submitted before step i * spacing + 1) on one continuous-batching Engine
(core.serve.Engine) over the shipped model with the given knobs, one engine step at a time,
until every request has finished, and records what each request did in each step (a Cell):
  absent     not yet arrived, or finished in an earlier step
  waiting    queued: no pages (never admitted, or preempted in an earlier step)
  stalled    admitted (holding pages) but given no work this step: under prefill_first a
             decoding request waits while any prompt is prefilled; under either policy a
             prompt waits when the token budget ran out
  prefill    a prompt chunk, with its tokens (the chunk that completes the prompt emits the
             first byte)
  replay     after a preemption, bytes it had emitted fed again (recomputed), emitting nothing
  decode     one token in, one byte out
  verify     a verify window (the pending byte + drafts) in, the accepted drafts + 1 out
  preempted  its pages were taken back this step (admission="optimistic" only); it waits again
and `finished` marks the step that emitted its last byte. Each Step also keeps the token
budget, the tokens the step fed by kind, and the pool's pages in use (the prefix cache's
among them). Per request (Served): when it arrived, its first and last byte's steps, time to
first token and time per output token in steps (the engine's own Timing), preemptions, tokens
recomputed, pages, its text.
Steps are counts: the run is the same on every machine the model's bits are the same on.

Cached per setting (single-flight); every figure of the tab reads these records, never an
engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import check_int
from core.experiments.batching_workload import ARRIVALS, MAX_SPACING, prompts
from core.experiments.flight import single_flight
from core.experiments.shipped import model
from core.model.attention import BLOCK
from core.serve.engine import Engine
from core.serve.reports import GenerateReport, StepReport

KINDS = ("absent", "waiting", "stalled", "prefill", "replay", "decode", "verify", "preempted")
WORKED = ("prefill", "replay", "decode", "verify")  # kinds that feed tokens


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    kind: str  # one of KINDS
    tokens: int = 0  # tokens fed this step
    emitted: int = 0  # bytes emitted this step
    finished: bool = False  # this step emitted its last byte


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    index: int  # 1 for the run's first step
    cells: tuple[Cell, ...]  # one per request, in arrival order
    budget: int  # the step's token budget (max_step_tokens)
    prompt_tokens: int  # tokens fed as prefill chunks or replays
    decode_tokens: int  # tokens fed as decode tokens or verify windows
    pages_used: int  # pool pages held after the step (requests and prefix cache)
    cache_pages: int  # ... of which the prefix cache holds (blocks and KDA checkpoints)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.decode_tokens


@dataclass(frozen=True, slots=True, kw_only=True)
class Served:
    request: int  # arrival order
    prompt_tokens: int
    n_new: int
    draft_len: int
    arrived: int  # steps run before it was submitted
    first_step: int  # the step that emitted its first byte
    finished_step: int
    ttft: int  # steps from arrival to the first byte, the step that emitted it counted
    tpot: float  # steps per output byte after the first
    preemptions: int
    recomputed: int  # tokens fed again after preemptions
    mla_pages: int  # pages its prompt + n_new tokens take alone: MLA latents
    kda_pages: int  # ... and its KDA state (constant)
    first_pages: int  # pages its first prefill chunk takes alone (optimistic admission's ask)
    text: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class Run:
    max_batch: int
    max_step_tokens: int
    prefill_chunk: int
    policy: str
    admission: str
    pool_pages: int
    spacing: int
    prefix_cache: bool
    steps: tuple[Step, ...]
    requests: tuple[Served, ...]

    @property
    def preemptions(self) -> int:
        return sum(r.preemptions for r in self.requests)

    @property
    def recomputed(self) -> int:
        return sum(r.recomputed for r in self.requests)

    @property
    def peak_pages(self) -> int:
        return max(s.pages_used for s in self.steps)


def _cells(report: StepReport, ids: list[int], running: set[int], done: set[int]
           ) -> tuple[Cell, ...]:
    """What each submitted request did in this step; updates running and done."""
    work = {w.request: w for w in report.work}
    running |= set(report.admitted)
    out = []
    for rid in ids:
        w = work.get(rid)
        if rid in done:
            out.append(Cell(kind="absent"))
        elif rid in report.preempted:
            out.append(Cell(kind="preempted"))
        elif w is not None:
            out.append(Cell(kind=w.kind, tokens=w.tokens, emitted=len(w.emitted),
                            finished=rid in report.finished))
        else:
            out.append(Cell(kind="stalled" if rid in running else "waiting"))
    running -= set(report.preempted) | set(report.finished)
    done |= set(report.finished)
    return tuple(out)


def _served(i: int, rep: GenerateReport, eng: Engine) -> Served:
    a, t, s = ARRIVALS[i], rep.timing, eng.scheduler
    n_tokens = len(prompts()[i]) + a.n_new
    total = eng.memory.pages_alone(n_tokens)
    mla = eng.dims.n_mla * -(-n_tokens // eng.P)
    first = min(len(prompts()[i]), s.prefill_chunk, s.max_step_tokens // BLOCK * BLOCK)
    return Served(request=i, prompt_tokens=len(prompts()[i]), n_new=a.n_new,
                  draft_len=a.draft_len, arrived=t.submitted_step, first_step=t.first_step,
                  finished_step=t.finished_step, ttft=t.steps_to_first, tpot=rep.steps_per_byte,
                  preemptions=rep.preemptions, recomputed=rep.recomputed_tokens,
                  mla_pages=mla, kda_pages=total - mla,
                  first_pages=eng.memory.pages_alone(first), text=rep.text)


@single_flight(48)
def run(max_batch: int, max_step_tokens: int, prefill_chunk: int, policy: str, admission: str,
        pool_pages: int, spacing: int, prefix_cache: bool = True) -> Run:
    """The workload on one Engine with these knobs (module docstring); the Engine validates
    its own knobs (ParamError), OutOfPages if a request could never fit the pool."""
    spacing = check_int("spacing", spacing, 0, MAX_SPACING)
    eng = Engine(model(), pool_pages, prefix_cache=prefix_cache, max_batch=max_batch,
                 max_step_tokens=max_step_tokens, prefill_chunk=prefill_chunk, policy=policy,
                 admission=admission, max_waiting=len(ARRIVALS))
    ids: list[int] = []
    running: set[int] = set()
    done: set[int] = set()
    steps: list[Step] = []
    while len(done) < len(ARRIVALS):
        while len(ids) < len(ARRIVALS) and len(ids) * spacing <= eng.steps:
            a = ARRIVALS[len(ids)]
            ids.append(eng.submit(prompts()[len(ids)], a.n_new, a.draft_len))
        report = eng.step()
        cells = _cells(report, ids, running, done)
        cells += (Cell(kind="absent"),) * (len(ARRIVALS) - len(cells))
        p = report.pages
        steps.append(Step(
            index=report.index, cells=cells, budget=report.budget,
            prompt_tokens=sum(w.tokens for w in report.work if w.kind in ("prefill", "replay")),
            decode_tokens=sum(w.tokens for w in report.work if w.kind in ("decode", "verify")),
            pages_used=p.total - p.free, cache_pages=p.cache_mla + p.cache_kda))
    reports = eng.run()
    return Run(max_batch=max_batch, max_step_tokens=max_step_tokens, prefill_chunk=prefill_chunk,
               policy=policy, admission=admission, pool_pages=pool_pages, spacing=spacing,
               prefix_cache=prefix_cache, steps=tuple(steps),
               requests=tuple(_served(i, reports[rid], eng) for i, rid in enumerate(ids)))


def fit_at_once(pool_pages: int, needs: list[int]) -> int:
    """How many requests, taken in arrival order, hold needs[i] pages each in the pool at once."""
    held = n = 0
    for need in needs:
        if held + need > pool_pages:
            break
        held, n = held + need, n + 1
    return n
