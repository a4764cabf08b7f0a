"""Memory: the page pool and prefix cache as the engine's requests see them.

  admit     prefix lookup; pin the reused blocks and their checkpoint group (a lease); adopt
            the blocks' MLA pages (shared, refcount + 1); allocate the KDA page groups and
            copy the group's states in, or zero them (a recycled page holds an old state).
            admission="reserve": every page the request can ever need (prompt + n_new tokens,
            less the reused blocks) must be available now, and what it does not take yet stays
            set aside for it, so it never runs short. "optimistic": only what its first chunk
            needs; later pages are taken as it grows. Available = free + what eviction can
            reclaim from the prefix cache - set aside, counted after the lease pins its
            entries. If reuse does not fit but running without it does, it runs without it.
  grow      MLA pages for a sequence's next tokens, from its reservation first; False when the
            pool is dry even after eviction (optimistic only: the engine then preempts).
  publish   after a prefill chunk: the prompt's full blocks computed so far and the KDA
            checkpoint groups captured at retained boundaries; groups become ready when the
            engine's step ends (cache.commit_step). Decode never publishes.
  retire    pages back (shared blocks stay with the cache), the lease released, the
            reservation returned. A preempted request is retired the same way and keeps its
            bytes; it is admitted again later, reusing whatever the cache still holds.
Invariant: set aside <= free + reclaimable, so a reserved request's growth always succeeds.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from core.model.config import ModelDims
from core.model.layers import KDAState
from core.paging.pool import OutOfPages, PageError, PageKind, PagePool
from core.paging.sequence import PagedSequence
from core.prefix.cache import PrefixCache
from core.prefix.entries import LookupResult
from core.serve.reports import PoolUsage
from core.serve.request import Admission, Request

ADMISSIONS = ("reserve", "optimistic")


class Memory:
    def __init__(self, pool: PagePool, dims: ModelDims, tokens_per_page: int,
                 cache: PrefixCache | None, checkpoint_every: int, admission: str) -> None:
        self.pool, self.dims, self.P, self.cache = pool, dims, tokens_per_page, cache
        self.checkpoint_every, self.admission = checkpoint_every, admission
        self.reserved = 0  # pages set aside for admitted requests' growth

    # ---- accounting ------------------------------------------------------------------------
    def available(self) -> int:
        spare = self.cache.reclaimable_pages() if self.cache is not None else 0
        return self.pool.num_free + spare - self.reserved

    def pages_alone(self, tokens: int) -> int:
        """Pages a sequence of `tokens` tokens takes with nothing shared."""
        return PagedSequence(self.pool, self.dims, self.P).pages_needed(tokens)

    def check_fits(self, prompt: bytes, n_new: int) -> None:
        """OutOfPages if the request could not fit even with the pool to itself."""
        need = self.pages_alone(len(prompt) + n_new)
        if need > self.pool.n_pages:
            raise OutOfPages(need, self.pool.n_pages,
                             f"this request ({len(prompt)} + {n_new} tokens, even with all "
                             f"{self.pool.n_pages} pages of the pool free)")

    def _make_room(self, n: int) -> bool:
        """n pages free now, evicting unpinned cache entries if needed."""
        if self.pool.num_free >= n:
            return True
        return self.cache is not None and self.cache.make_room(n)

    # ---- a request's pages -----------------------------------------------------------------
    def lookup(self, req: Request) -> LookupResult | None:
        """What req's prompt can reuse now (read-only; None with the prefix cache off)."""
        if self.cache is None:
            return None
        return self.cache.lookup(req.prompt, req.check_groups, req.salt)

    def admit(self, req: Request, lookup: LookupResult | None,
              first_end: Callable[[int], int | None]) -> bool:
        """Give req its pages (module docstring); False (nothing changed) if they do not fit.
        lookup: this step's `lookup(req)`; first_end(start): where its first chunk from
        `start` ends (None: no chunk fits the step). When reusing the prefix does not fit (the
        pinned entries stay in the pool beside the request's own pages) but running without
        it does, the request runs without it and the entries may be evicted; so does a request
        that preempted itself since its last admission (Request.reuse_off)."""
        if lookup is None or not lookup.boundary_blocks:
            tries = [lookup]
        else:
            tries = [None] if req.reuse_off else [lookup, None]
        for look in tries:
            if self._admit(req, lookup, look, first_end):
                req.reuse_off = False
                return True
        return False

    def _admit(self, req: Request, lookup: LookupResult | None, look: LookupResult | None,
               first_end: Callable[[int], int | None]) -> bool:
        seq = PagedSequence(self.pool, self.dims, self.P)
        cache = self.cache
        reused_blocks = look.boundary_blocks if look is not None else 0
        end = first_end(reused_blocks * self.P)
        if end is None:
            return False
        total = seq.pages_needed(req.max_tokens, reused_blocks)
        now = seq.pages_needed(end, reused_blocks)
        want = total if self.admission == "reserve" else now
        # pin first: pinned entries are no longer reclaimable, and others' reservations count
        # on what is
        lease = cache.acquire(req.prompt, look, req.salt) if look is not None else None
        if self.available() < want or not self._make_room(now):
            if lease is not None:
                cache.release(lease)
            return False
        if lease is not None:
            cache.touch(lease, look)
        seq.allocate_state()
        if lease is not None and lease.blocks:
            seq.adopt(cache.block_pages(lease))
            self._restore(seq, lease.group)
        else:  # a fresh sequence starts from zero state; recycled pages hold an old one
            self.pool.arena[torch.tensor([p for g in seq.kda_groups for p in g])] = 0
        seq.grow(end)
        req.seq, req.lease, req.fed = seq, lease, seq.length
        req.reserved = total - now if self.admission == "reserve" else 0
        self.reserved += req.reserved
        req.admission = Admission(lookup=lookup, reused_tokens=seq.length,
                                  reserved_pages=req.reserved,
                                  reuse_dropped=look is None and lookup is not None
                                  and lookup.boundary_blocks > 0)
        return True

    def _restore(self, seq: PagedSequence, group: bytes | None) -> None:
        """Copy the checkpoint group's KDA states into the sequence's own pages."""
        if group is None:
            return
        d = self.dims
        for i, s in enumerate(self.cache.read_group(group)):
            if s is None:  # a partial group (only an unsafe lookup adopts one): a blank layer
                s = KDAState(torch.zeros(1, d.conv_size - 1, 3 * d.kda_inner),
                             torch.zeros(1, d.kda_heads, d.kda_head_dim, d.kda_head_dim))
            seq.write_kda(i, s)

    def grow(self, req: Request, tokens: int) -> bool:
        """MLA pages for `tokens` tokens of req's sequence; False if the pool cannot give them."""
        seq = req.seq
        need = self.dims.n_mla * max(0, -(-tokens // self.P) - len(seq.mla_tables[0]))
        if need == 0:
            return True
        take = min(need, req.reserved)
        self.reserved -= take  # set-aside pages become real ones
        req.reserved -= take
        if not self._make_room(need):
            self.reserved += take
            req.reserved += take
            if self.admission == "reserve":
                raise RuntimeError(f"request {req.id}: {need} reserved pages could not be "
                                   f"allocated ({self.pool.num_free} free): reservation broken")
            return False
        seq.grow(tokens)
        return True

    def release_past(self, req: Request, tokens: int) -> int:
        """MLA pages past the first `tokens` tokens back to the pool (set aside again under
        admission="reserve": the request may need them later); the count freed."""
        seq = req.seq
        keep = -(-tokens // self.P)
        freed = [p for table in seq.mla_tables for p in table[keep:]]
        for table in seq.mla_tables:
            del table[keep:]
        if freed:
            self.pool.free(freed)
            if self.admission == "reserve":
                req.reserved += len(freed)
                self.reserved += len(freed)
        return len(freed)

    def retire(self, req: Request) -> None:
        """Pages back, lease released, reservation returned (finish, cancel or preemption)."""
        if req.seq is not None:
            req.seq.release()
            req.seq = None
        if req.lease is not None:
            self.cache.release(req.lease)
            req.lease = None
        self.reserved -= req.reserved
        req.reserved = 0
        req.fed = 0

    # ---- the prefix cache ------------------------------------------------------------------
    def capture_points(self, req: Request, start: int, end: int) -> tuple[int, ...]:
        """Retained block boundaries in (start, end], relative to start (a chunk's captures)."""
        if self.cache is None:
            return ()
        P, k = self.P, self.checkpoint_every
        return tuple(b * P - start for b in range(start // P + 1, end // P + 1) if b % k == 0)

    def publish(self, req: Request, start: int, end: int,
                captured: list[list[KDAState]]) -> tuple[int, int]:
        """Publish the prompt's full blocks ending in (start, end] and the groups captured at
        the chunk's capture points (captured[j]: every KDA layer's state at point j)."""
        cache = self.cache
        if cache is None:
            return 0, 0
        P, hashes = self.P, cache.hashes(req.prompt, req.salt)
        blocks = groups = 0
        for b in range(start // P, min(end // P, len(hashes))):
            parent = hashes[b - 1] if b else None
            if parent is not None and parent not in cache.blocks:
                break  # the chain was evicted under it: nothing deeper can be published
            blocks += cache.insert_block(hashes[b], parent, req.prompt[b * P : (b + 1) * P],
                                         req.seq.block_pages(b))
        for rel, states in zip(self.capture_points(req, start, end), captured, strict=True):
            b = (start + rel) // P
            groups += cache.publish_group(hashes[b - 1], states)
        req.published[0] += blocks
        req.published[1] += groups
        return blocks, groups

    def usage(self, req: Request | None = None) -> PoolUsage:
        pool, cache = self.pool, self.cache
        held = cache.held_pages() if cache is not None else dict.fromkeys(PageKind, 0)
        seq = req.seq if req is not None else None
        return PoolUsage(
            request_mla=sum(len(t) for t in seq.mla_tables) if seq is not None else 0,
            request_kda=sum(len(g) for g in seq.kda_groups) if seq is not None else 0,
            cache_mla=held[PageKind.MLA_KV], cache_kda=held[PageKind.KDA_STATE],
            free=pool.num_free, total=pool.n_pages)

    def check(self) -> None:
        self.pool.check()
        if self.cache is not None:
            self.cache.check()
        spare = self.cache.reclaimable_pages() if self.cache is not None else 0
        if not 0 <= self.reserved <= self.pool.num_free + spare:
            raise PageError(f"pages set aside ({self.reserved}) exceed what the pool can give "
                            f"({self.pool.num_free} free + {spare} reclaimable)")
