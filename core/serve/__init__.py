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

Modules without torch (the tabs declare controls with them before torch loads; the exports
above load on first use): limits (the engine's and ServeSession's bounds), prompts (the three
held-out prompt kinds). The tabs' experiments on this engine: core.experiments.

Oracle: with the default (batch-invariant) kernels every request's bytes equal
HybridLM.generate byte for byte, whatever its batch, arrival order, knobs and preemptions, for
every draft_len in [0, 8]; a prefix hit yields the last logits of a cold HybridLM.forward bit
for bit (chunks and checkpoints end on multiples of 64, where the arithmetic is the same).
"""

import importlib

# PEP 562: the exports load on first use, so a torch-free leaf (limits, prompts) imports without
# the engine. Each name -> the module that defines it.
_EXPORTS = {
    "SpecComparison": "compare", "compare_decoding": "compare", "gamma_sweep": "compare",
    "Drafter": "drafter", "PromptLookup": "drafter",
    "DEFAULTS": "engine", "Engine": "engine", "EngineBusy": "engine",
    "DecodeStep": "reports", "ExpertLoads": "reports", "GenerateReport": "reports",
    "PoolUsage": "reports", "PrefillReport": "reports", "SpecSummary": "reports",
    "StepReport": "reports", "StepSeconds": "reports", "Timing": "reports",
    "VerifyStep": "reports", "Work": "reports",
    "Request": "request", "Status": "request",
    "Window": "verify", "commit": "verify", "verify_window": "verify",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
