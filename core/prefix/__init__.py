"""The prefix cache of a hybrid model: reuse is only as deep as the last complete KDA checkpoint.

Exports
  block_hashes    chained blake2b digests of full blocks (identical across processes)
  PrefixCache     MLA blocks + atomic KDA checkpoint groups in the shared PagePool;
                  two-stage lookup, ready-at-end-of-step, whole-group LRU eviction, pins
  LookupResult    how many tokens are reusable and why the lookup stopped (REASONS)

Oracle: a prefix hit served by core.serve.Engine yields the same last logits as a cold
HybridLM.forward of the whole prompt (float32, max abs <= 1e-4); `naive_lookup` (tests) is a
slow twin that walks byte prefixes without hashes.
"""

from core.prefix.cache import PrefixCache
from core.prefix.entries import REASONS, Lease, LookupResult
from core.prefix.hashing import block_hashes

__all__ = ["REASONS", "Lease", "LookupResult", "PrefixCache", "block_hashes"]
