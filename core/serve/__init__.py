"""Serving the tiny hybrid model: prefill and decode over pages with prefix reuse, and
speculative decoding with rollback by replay.

Exports
  Engine           prefill / generate / stream over a PagePool with a PrefixCache (one request
                   at a time); generate(prompt, n_new, draft_len=gamma) decodes speculatively
  PromptLookup, Drafter   the default drafter (n-gram lookup in the request's own history)
  verify_window, commit   one verify pass with the step's arithmetic; commit a prefix of it
  compare_decoding, gamma_sweep, SpecComparison   speculative vs plain greedy,
                   side by side in one run (acceptance, bytes per pass, measured speedup)
  PrefillReport, GenerateReport, DecodeStep, VerifyStep, SpecSummary, ExpertLoads, PoolUsage
                   frozen reports for figures and tests (reports.py: the stream's order)

Oracle: a prefix hit yields the last logits of a cold HybridLM.forward of the same prompt
(float32, max abs <= 1e-4); with no reuse `generate` equals HybridLM.generate byte for byte for
every draft_len in [0, 8], because a verify window's logits equal the step's bit for bit.
"""

from core.serve.compare import SpecComparison, compare_decoding, gamma_sweep
from core.serve.drafter import Drafter, PromptLookup
from core.serve.engine import Engine
from core.serve.reports import (
    DecodeStep,
    ExpertLoads,
    GenerateReport,
    PoolUsage,
    PrefillReport,
    SpecSummary,
    VerifyStep,
)
from core.serve.verify import Window, commit, verify_window

__all__ = [
    "DecodeStep", "Drafter", "Engine", "ExpertLoads", "GenerateReport",
    "PoolUsage", "PrefillReport", "PromptLookup", "SpecComparison", "SpecSummary", "VerifyStep",
    "Window", "commit", "compare_decoding", "gamma_sweep", "verify_window",
]
