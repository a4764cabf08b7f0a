"""The prefix cache of a hybrid model: reuse is only as deep as the last complete KDA checkpoint.

Exports
  block_hashes    chained blake2b digests of full blocks (identical across processes)
  usable_blocks   the reuse rule (checkpoint grid, one token left to run), shared with core.fleet
  PrefixCache     MLA blocks + atomic KDA checkpoint groups in the shared PagePool;
                  two-stage lookup, ready-at-end-of-step, whole-group LRU eviction, pins
  LookupResult    how many tokens are reusable and why the lookup stopped (REASONS)

PrefixCache (torch, the model's dims) is imported on first use, so the fleet can take the rule
without loading torch. Oracle: a prefix hit served by core.serve.Engine yields the last logits
of a cold HybridLM.forward of the whole prompt (float32, max abs <= 1e-4); the lookup equals a
slow twin that walks byte prefixes without hashes (tests/core/prefix).
"""

from core.prefix.entries import REASONS, Lease, LookupResult
from core.prefix.hashing import block_hashes
from core.prefix.rule import usable_blocks

__all__ = ["REASONS", "Lease", "LookupResult", "PrefixCache", "block_hashes", "usable_blocks"]


def __getattr__(name: str) -> object:
    if name == "PrefixCache":
        from core.prefix.cache import PrefixCache

        return PrefixCache
    raise AttributeError(f"module 'core.prefix' has no attribute {name!r}")
