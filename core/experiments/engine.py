"""The Engine tab's experiment: speculative decoding counted pass by pass, acceptance against
draft length on the three prompt kinds, and the step timeline of one request with the bytes
each rollback moved.

prompt(kind)  the three prompt kinds' held-out text: core/serve/prompts.py
spec_run(model, kind, gamma, n_new)
          one speculative request (prompt(kind), a fresh engine with no prefix cache and every
          expert resident, as core.serve.compare.compare_decoding runs it) reduced to
          counts: one PassRow per verify pass. Wall times are dropped on purpose: everything
          here is deterministic, so a figure may draw it (measured speedups belong to
          compare_decoding and a live panel).
plain_text(model, kind, n_new)
          the same request decoded plain greedy: the oracle every spec_run's text must equal.
SpecSweep.of(runs, plain)
          the runs of every (kind, gamma), checked and arranged for a figure.

A pass's window is the pending token plus its drafts; n accepted drafts commit n + 1 positions.
A pass that rejected a draft rolls back: every KDA layer replays the n + 1 committed positions
from its committed state, and the bytes that moved are the engine's own count
(VerifyStep.replay_moved: S read and written, the replayed raw inputs read). A window kept whole
adopts its last state and moves nothing.

The tab's runs on the shipped model, N_NEW bytes each (core.experiments.scenes), cached per
parameter set (single-flight: two figures redrawn at once share one engine run):
  run(kind, gamma)   one SpecRun (read-only)
  plain(kind)        plain greedy decoding's text
  sweep()            SpecSweep of every kind at every gamma of GAMMAS, each checked against
                     plain; the app warms it in the background (sweep.ready(): cached already)
  speedup_now(draft_len, kind, on_round)   speculative vs plain greedy measured now, best of
                     REPEAT runs each (core.serve.compare): never cached, never on a figure
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from core.errors import ParamError, check_choice, check_int
from core.experiments.flight import single_flight
from core.experiments.scenes import GAMMAS, N_NEW
from core.experiments.shipped import model as shipped_model
from core.model.model import HybridLM
from core.serve.compare import POOL_PAGES, SpecComparison, compare_decoding
from core.serve.engine import Engine
from core.serve.limits import MAX_DRAFT
from core.serve.prompts import KINDS, prompt
from core.serve.reports import GenerateReport

MAX_NEW = 64
REPEAT = 2  # runs of each side in speedup_now; the fastest is kept (a busy machine only slows)


@dataclass(frozen=True, slots=True, kw_only=True)
class PassRow:
    """One verify pass, as a step timeline draws it: draft, verify, accept, replay."""

    index: int
    start: int  # tokens stored before the pass
    drafted: int  # drafts in the window (the window is drafted + 1 positions)
    accepted: int  # leading drafts equal to the model's argmax
    emitted: int  # bytes this pass added to the text (accepted + 1, or fewer at the end)
    replayed: int  # positions replayed per KDA layer (0: the whole window was kept)
    held_bytes: int  # replay inputs held for the window, every KDA layer (the engine's count)
    snapshot_bytes: int  # what per-position snapshots would have held instead
    moved_bytes: int  # read + written by this pass's rollback (VerifyStep.replay_moved)
    pages_grown: int  # MLA pages allocated for the window
    pages_released: int  # MLA pages past the accepted length given back

    @property
    def window(self) -> int:
        return self.drafted + 1

    @property
    def rejected(self) -> int:
        return self.drafted - self.accepted


@dataclass(frozen=True, kw_only=True)
class SpecRun:
    """One speculative request reduced to counts (no wall times)."""

    kind: str
    gamma: int
    n_new: int
    prompt: bytes
    text: bytes
    passes: tuple[PassRow, ...]

    @property
    def drafted(self) -> int:
        return sum(p.drafted for p in self.passes)

    @property
    def accepted(self) -> int:
        return sum(p.accepted for p in self.passes)

    @property
    def acceptance(self) -> float:
        """accepted / drafted (0.0 when nothing was drafted)."""
        return self.accepted / self.drafted if self.drafted else 0.0

    @property
    def bytes_per_verify_pass(self) -> float:
        """Bytes each verify pass added: the model forward passes plain greedy decoding would
        need per speculative pass (plain greedy: 1.0)."""
        return sum(p.emitted for p in self.passes) / len(self.passes) if self.passes else 1.0

    @property
    def accepted_per_pass(self) -> float:
        return self.accepted / len(self.passes) if self.passes else 0.0

    @property
    def rollbacks(self) -> int:
        return sum(p.replayed > 0 for p in self.passes)

    @property
    def moved_bytes(self) -> int:
        return sum(p.moved_bytes for p in self.passes)

    @property
    def held_bytes(self) -> int:
        return sum(p.held_bytes for p in self.passes)

    @property
    def snapshot_bytes(self) -> int:
        return sum(p.snapshot_bytes for p in self.passes)


def _engine(model: HybridLM) -> Engine:
    return Engine(model, POOL_PAGES, prefix_cache=False)


def _check(model: HybridLM, kind: str, n_new: int) -> tuple[bytes, int]:
    if not isinstance(model, HybridLM):
        raise ParamError(f"model must be a HybridLM, got {type(model).__name__}")
    return prompt(kind), check_int("n_new", n_new, 2, MAX_NEW)


def rows(report: GenerateReport) -> tuple[PassRow, ...]:
    """A speculative GenerateReport's verify passes as PassRows."""
    if report.spec is None:
        raise ParamError("report must come from a speculative run (draft_len > 0)")
    return tuple(PassRow(
        index=s.index, start=s.start, drafted=s.drafted, accepted=s.accepted,
        emitted=len(s.emitted), replayed=s.replayed, held_bytes=s.replay_bytes,
        snapshot_bytes=s.snapshot_bytes, moved_bytes=s.replay_moved,
        pages_grown=s.pages_grown, pages_released=s.pages_released) for s in report.verify)


def spec_run(model: HybridLM, kind: str, gamma: int, n_new: int) -> SpecRun:
    prompt, n_new = _check(model, kind, n_new)
    gamma = check_int("gamma", gamma, 1, MAX_DRAFT)
    report = _engine(model).generate(prompt, n_new, draft_len=gamma)
    return SpecRun(kind=kind, gamma=gamma, n_new=n_new, prompt=prompt, text=report.text,
                   passes=rows(report))


def plain_text(model: HybridLM, kind: str, n_new: int) -> bytes:
    prompt, n_new = _check(model, kind, n_new)
    return _engine(model).generate(prompt, n_new).text


@dataclass(frozen=True, kw_only=True)
class SpecSweep:
    """SpecRuns of every kind at every gamma (same n_new), each checked against plain greedy."""

    n_new: int
    kinds: tuple[str, ...]
    gammas: tuple[int, ...]
    runs: tuple[SpecRun, ...]  # kind-major, then gamma
    plain: tuple[bytes, ...]  # per kind: the plain greedy text

    @classmethod
    def of(cls, runs: Iterable[SpecRun], plain: Mapping[str, bytes]) -> SpecSweep:
        runs = tuple(runs)
        if not runs:
            raise ParamError("runs must hold at least one SpecRun")
        kinds = tuple(dict.fromkeys(r.kind for r in runs))
        gammas = tuple(sorted({r.gamma for r in runs}))
        by = {(r.kind, r.gamma): r for r in runs}
        if len(by) != len(runs) or len(by) != len(kinds) * len(gammas):
            raise ParamError("runs must hold each (kind, gamma) exactly once, every gamma for "
                             "every kind")
        if len({r.n_new for r in runs}) != 1:
            raise ParamError("runs must share one n_new")
        missing = [k for k in kinds if k not in plain]
        if missing:
            raise ParamError(f"plain must hold the plain greedy text of {missing}")
        for r in runs:
            if r.text != plain[r.kind]:
                raise AssertionError(f"{r.kind}, gamma {r.gamma}: speculative text differs "
                                     f"from plain greedy decoding")
        return cls(n_new=runs[0].n_new, kinds=kinds, gammas=gammas,
                   runs=tuple(by[k, g] for k in kinds for g in gammas),
                   plain=tuple(plain[k] for k in kinds))

    def run(self, kind: str, gamma: int) -> SpecRun:
        check_choice("kind", kind, self.kinds)
        check_choice("gamma", gamma, self.gammas)
        return self.runs[self.kinds.index(kind) * len(self.gammas) + self.gammas.index(gamma)]

    def series(self, kind: str, field: str) -> tuple[float, ...]:
        """A SpecRun property (acceptance, bytes_per_verify_pass, ...) of `kind` per gamma."""
        return tuple(float(getattr(self.run(kind, g), field)) for g in self.gammas)


@single_flight(len(KINDS) * len(GAMMAS))
def run(kind: str, gamma: int) -> SpecRun:
    return spec_run(shipped_model(), kind, gamma, N_NEW)


def passes(draft_len: int, kind: str) -> int:
    """Verify passes of the request the Engine tab steps through (its length in steps)."""
    return len(run(kind, draft_len).passes)


@single_flight(len(KINDS))
def plain(kind: str) -> bytes:
    return plain_text(shipped_model(), kind, N_NEW)


@single_flight(1)
def sweep() -> SpecSweep:
    return SpecSweep.of((run(k, g) for k in KINDS for g in GAMMAS), {k: plain(k) for k in KINDS})


def speedup_now(draft_len: int, kind: str,
                on_round: Callable[[int, int], None] | None = None) -> SpecComparison:
    return compare_decoding(shipped_model(), prompt(kind), N_NEW, draft_len, REPEAT,
                            on_round=on_round)
