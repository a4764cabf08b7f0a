"""Paging for a hybrid model: one page pool for MLA latent KV and constant-size KDA state.

Exports
  PagePool, PageKind, OutOfPages, PageError   one free list, kinds, refcounts, all-or-nothing
  HeadLayout, pack_heads, unpack_heads        a KDA state in whole heads over pages (lossless)
  PagedGeometry, toy_geometry, k3_geometry    the memory ledger at both scales
  PagedSequence                               one request's DecodeState stored in pages

Oracle: invariants after every operation (free + used == total, no page in two places,
refcount >= 1 for used pages; a failed alloc changes nothing), checked by a hypothesis state
machine; pack/unpack round trips bit for bit in float32 and bfloat16.
"""

from core.paging.ledger import PagedGeometry, k3_geometry, toy_geometry
from core.paging.pack import HeadLayout, pack_heads, unpack_heads
from core.paging.pool import OutOfPages, PageError, PageKind, PagePool
from core.paging.sequence import PagedSequence

__all__ = [
    "HeadLayout", "OutOfPages", "PageError", "PageKind", "PagePool", "PagedGeometry",
    "PagedSequence", "k3_geometry", "pack_heads", "toy_geometry", "unpack_heads",
]
