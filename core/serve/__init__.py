"""Serving the tiny hybrid model: prefill and decode over pages with prefix reuse.

Exports
  Engine           prefill / generate over a PagePool with a PrefixCache (one request at a time)
  PrefillReport, GenerateReport, DecodeStep, PoolUsage   frozen reports for figures and tests

Oracle: a prefix hit yields the last logits of a cold HybridLM.forward of the same prompt
(float32, max abs <= 1e-4); with no reuse `generate` equals HybridLM.generate byte for byte.
"""

from core.serve.engine import Engine
from core.serve.reports import DecodeStep, GenerateReport, PoolUsage, PrefillReport

__all__ = ["DecodeStep", "Engine", "GenerateReport", "PoolUsage", "PrefillReport"]
