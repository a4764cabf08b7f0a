"""Serving the tiny hybrid model: continuous batching over pages with prefix reuse, and
speculative decoding with rollback by replay.

Exports
  Engine           a continuous-batching engine over a PagePool with a PrefixCache: submit /
                   step / run / cancel; generate / stream / prefill / generate_many (a batch of
                   one, or submit + run); draft_len = gamma decodes speculatively
  Request, Status  one request's life (the scheduler's, the speculative path's, the reports')
  EngineBusy       the waiting queue is full (max_waiting)
  PromptLookup, Drafter   the default drafter (n-gram lookup in the request's own history)
  verify_window, commit   one verify pass with the step's arithmetic; commit a prefix of it
  compare_decoding, gamma_sweep, SpecComparison   speculative vs plain greedy,
                   side by side in one run (acceptance, bytes per pass, measured speedup)
  PrefillReport, GenerateReport, DecodeStep, VerifyStep, SpecSummary, ExpertLoads, PoolUsage
                   frozen reports for figures and tests (reports.py: the stream's order)

  StepReport, Work, StepSeconds, Timing   what one engine step did, and where its time went

Oracle: with the default (batch-invariant) kernels every request's bytes equal
HybridLM.generate byte for byte, whatever its batch, arrival order, knobs and preemptions, for
every draft_len in [0, 8]; a prefix hit yields the last logits of a cold HybridLM.forward bit
for bit (chunks and checkpoints end on multiples of 64, where the arithmetic is the same).
"""

from core.serve.compare import SpecComparison, compare_decoding, gamma_sweep
from core.serve.drafter import Drafter, PromptLookup
from core.serve.engine import DEFAULTS, Engine, EngineBusy
from core.serve.reports import (
    DecodeStep,
    ExpertLoads,
    GenerateReport,
    PoolUsage,
    PrefillReport,
    SpecSummary,
    StepReport,
    StepSeconds,
    Timing,
    VerifyStep,
    Work,
)
from core.serve.request import Request, Status
from core.serve.verify import Window, commit, verify_window

__all__ = [
    "DEFAULTS", "DecodeStep", "Drafter", "Engine", "EngineBusy", "ExpertLoads", "GenerateReport",
    "PoolUsage", "PrefillReport", "PromptLookup", "Request", "SpecComparison", "SpecSummary",
    "Status", "StepReport", "StepSeconds", "Timing", "VerifyStep", "Window", "Work", "commit",
    "compare_decoding", "gamma_sweep", "verify_window",
]
