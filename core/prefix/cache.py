"""PrefixCache: chained MLA blocks plus atomic KDA checkpoint groups, with a two-stage lookup.

Contract (reference §8):
  * Blocks are full `block_tokens`-byte blocks keyed by their chained hash; the bytes are
    compared on every hit, so a collision never reuses wrong work. A block holds one page per
    MLA layer (a reference on pages the request wrote; the pool's refcount shares them).
  * A checkpoint group holds every KDA layer's S and conv tail at a block boundary. It is
    published all or nothing (a group missing a layer is `partial` and never used), and usable
    only after `commit_step()` marks it ready (a request in the same step cannot match it).
  * lookup: stage 1 walks the blocks while hashes hit and bytes match; stage 2 backs off from
    the deepest match to the last boundary with a complete, ready group that leaves at least one
    prompt token to run (its logits are the next token's). The result says why it stopped.
  * Memory is charged to the same PagePool as live requests. Eviction is LRU over unpinned
    entries, deepest first on ties, whole groups only; a block is evicted only as a leaf (no
    cached child), together with its group. Pinned entries (a running request's) never go.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from core.errors import ParamError, check_int
from core.model.config import ModelDims
from core.model.layers import KDAState
from core.paging.ledger import toy_geometry
from core.paging.pack import pack_blob, pack_heads, unpack_blob, unpack_heads
from core.paging.pool import PageKind, PagePool
from core.prefix.entries import (
    EVICTED,
    HIT,
    LAST_TOKEN,
    MISS,
    NO_CHECKPOINT,
    NOT_READY,
    PARTIAL,
    READY,
    SHORT,
    BlockEntry,
    GroupEntry,
    Lease,
    LookupResult,
)
from core.prefix.hashing import block_hashes, check_prompt


class PrefixCache:
    def __init__(self, pool: PagePool, dims: ModelDims, tokens_per_page: int,
                 salt: bytes = b"") -> None:
        self.geometry = toy_geometry(dims, tokens_per_page)
        if self.geometry.page_bytes != pool.page_bytes:
            raise ParamError(f"pool page_bytes must be {self.geometry.page_bytes} "
                             f"(tokens_per_page x MLA latent bytes), got {pool.page_bytes}")
        self.pool, self.dims, self.salt = pool, dims, salt
        self.P = self.geometry.tokens_per_page
        self.blocks: dict[bytes, BlockEntry] = {}
        self.groups: dict[bytes, GroupEntry] = {}
        self.evicted_groups: set[bytes] = set()  # tombstones: say "evicted", not "none"
        self._pending: list[bytes] = []  # groups published this step, ready at commit_step
        self._clock = 0
        self.queries = self.hit_tokens = self.queried_tokens = 0

    # ---- lookup ---------------------------------------------------------------------------
    def hashes(self, tokens: bytes, salt: bytes | None = None) -> list[bytes]:
        """The chained block hashes; `salt` (default: the cache's) seeds the chain, so only
        prompts with the same salt share blocks (one student's prompts never match
        another's: a reused-token count would tell who typed what)."""
        return block_hashes(tokens, self.P, self.salt if salt is None else salt)

    def lookup(self, tokens: bytes, check_groups: bool = True,
               salt: bytes | None = None) -> LookupResult:
        """Stage 1 then stage 2 (read-only). check_groups=False also accepts partial and
        unready groups: the bug a real cache must not have, kept to show what it does."""
        tokens = check_prompt(tokens)
        hashes = self.hashes(tokens, salt)
        stage1, collision = 0, False
        for i, h in enumerate(hashes):
            e = self.blocks.get(h)
            if e is None:
                break
            if e.tokens != tokens[i * self.P : (i + 1) * self.P]:
                collision = True
                break
            stage1 += 1
        status = tuple(self._status(hashes[b - 1]) for b in range(1, stage1 + 1))
        usable = (READY,) if check_groups else (READY, NOT_READY, PARTIAL)
        boundary, reason = 0, None
        for b in range(stage1, 0, -1):
            st = LAST_TOKEN if b * self.P >= len(tokens) else status[b - 1]
            if st in usable:
                boundary = b
                break
            reason = reason or st  # why the deepest match was not usable
        if not hashes:
            reason = SHORT
        elif stage1 == 0:
            reason = MISS
        return LookupResult(prompt_tokens=len(tokens), block_tokens=self.P, stage1_blocks=stage1,
                            boundary_blocks=boundary, reason=reason or HIT, boundary_status=status,
                            collision=collision)

    def _status(self, h: bytes) -> str:
        g = self.groups.get(h)
        if g is None:
            return EVICTED if h in self.evicted_groups else NO_CHECKPOINT
        if not g.complete:
            return PARTIAL
        return READY if g.ready else NOT_READY

    # ---- a request's pins -----------------------------------------------------------------
    def acquire(self, tokens: bytes, result: LookupResult, salt: bytes | None = None) -> Lease:
        """Pin the reused blocks and the group at the boundary (nothing else changes)."""
        hashes = self.hashes(tokens, salt)[: result.boundary_blocks]
        for h in hashes:
            self.blocks[h].pins += 1
        group = hashes[-1] if hashes else None
        if group is not None:
            self.groups[group].pins += 1
        return Lease(tuple(hashes), group)

    def touch(self, lease: Lease, result: LookupResult) -> None:
        """A request was admitted with this lease: refresh LRU times, count the hit."""
        self._clock += 1
        for h in lease.blocks:
            self.blocks[h].last_used = self._clock
        if lease.group is not None:
            self.groups[lease.group].last_used = self._clock
        self.queries += 1
        self.queried_tokens += result.prompt_tokens
        self.hit_tokens += result.reusable_tokens

    def release(self, lease: Lease) -> None:
        for h in lease.blocks:
            self.blocks[h].pins -= 1
        if lease.group is not None:
            self.groups[lease.group].pins -= 1

    def block_pages(self, lease: Lease) -> list[tuple[int, ...]]:
        return [self.blocks[h].pages for h in lease.blocks]

    def read_group(self, digest: bytes) -> list[KDAState | None]:
        """The KDA states of a group (None for a layer a partial group never wrote)."""
        d, hp = self.dims, self.geometry.heads.pages
        out: list[KDAState | None] = []
        for pages in self.groups[digest].layers:
            if pages is None:
                out.append(None)
                continue
            S = unpack_heads(self.pool, list(pages[:hp]), d.kda_heads, d.kda_head_dim,
                             d.kda_head_dim, torch.float32)  # [H, K, V]
            conv = unpack_blob(self.pool, list(pages[hp:]), (d.conv_size - 1, 3 * d.kda_inner),
                               torch.float32)
            out.append(KDAState(conv.unsqueeze(0), S.unsqueeze(0)))
        return out

    # ---- publish --------------------------------------------------------------------------
    def insert_block(self, digest: bytes, parent: bytes | None, tokens: bytes,
                     pages: tuple[int, ...]) -> bool:
        """Retain a full block the request wrote; False when it is cached already. Then the
        entry takes the request's copy (the same bytes, compared) and drops its older one, so a
        block below it never ties an unshared page to a running request's."""
        old = self.blocks.get(digest)
        if old is not None:
            if old.pages != tuple(pages) and old.tokens == bytes(tokens):
                self.pool.incref(pages)
                self.pool.free(old.pages)
                old.pages = tuple(pages)
            return False
        if parent is not None and parent not in self.blocks:
            raise ParamError("a block's parent must be cached before it (chained hashes)")
        self.pool.incref(pages)
        depth = self.blocks[parent].depth + 1 if parent is not None else 1
        self.blocks[digest] = BlockEntry(digest=digest, parent=parent, tokens=bytes(tokens),
                                         pages=tuple(pages), depth=depth, last_used=self._clock)
        if parent is not None:
            self.blocks[parent].children += 1
        return True

    def publish_group(self, digest: bytes, states: Sequence[KDAState | None]) -> bool:
        """Copy every KDA layer's state at block `digest` into new pages, all or nothing.

        Evicts unpinned LRU entries if the pool is short; returns False (nothing published,
        nothing evicted) when even that would not fit. A None layer makes a partial group.
        """
        if digest not in self.blocks or digest in self.groups:
            return False  # its block was evicted meanwhile, or it is published already
        if len(states) != self.dims.n_kda:
            raise ParamError(f"states must have one entry per KDA layer ({self.dims.n_kda}), "
                             f"got {len(states)}")
        per = self.geometry.kda_pages_per_layer
        need = per * sum(s is not None for s in states)
        if not self.make_room(need, protect=digest):
            return False
        pages = self.pool.alloc(PageKind.KDA_STATE, need, "a checkpoint group")
        layers: list[tuple[int, ...] | None] = []
        hp = self.geometry.heads.pages
        for s in states:
            if s is None:
                layers.append(None)
                continue
            mine, pages = pages[:per], pages[per:]
            pack_heads(self.pool, mine[:hp], s.S[0])
            pack_blob(self.pool, mine[hp:], s.conv[0])
            layers.append(tuple(mine))
        self.groups[digest] = GroupEntry(digest=digest, depth=self.blocks[digest].depth,
                                         layers=tuple(layers), last_used=self._clock)
        self.evicted_groups.discard(digest)
        self._pending.append(digest)
        return True

    def commit_step(self) -> None:
        """End of a step: groups published in it become ready."""
        for h in self._pending:
            if h in self.groups:
                self.groups[h].ready = True
        self._pending.clear()

    # ---- eviction -------------------------------------------------------------------------
    def reclaimable_pages(self) -> int:
        """Pages eviction could return to the free list now: every unpinned group's, and every
        block's that could become a leaf and go (unpinned, its group unpinned, its pages not
        shared with a running request, and the same for every block below it)."""
        pages = [p for g in self.groups.values() if g.pins == 0 for p in g.pages]
        below: dict[bytes, list[bytes]] = {}
        for b in self.blocks.values():
            if b.parent is not None:
                below.setdefault(b.parent, []).append(b.digest)
        free: dict[bytes, bool] = {}
        for b in sorted(self.blocks.values(), key=lambda e: -e.depth):  # children first
            free[b.digest] = (b.pins == 0 and self.groups.get(b.digest, _UNPINNED).pins == 0
                              and all(self.pool.refcount(p) == 1 for p in b.pages)
                              and all(free[c] for c in below.get(b.digest, ())))
            if free[b.digest]:
                pages += b.pages
        return sum(self.pool.refcount(p) == 1 for p in pages)

    def make_room(self, need: int, protect: bytes | None = None) -> bool:
        """Evict until `need` pages are free; False (and nothing evicted) if impossible."""
        check_int("need", need, 0)
        if self.pool.num_free >= need:
            return True
        if self.pool.num_free + self.reclaimable_pages() < need:
            return False
        while self.pool.num_free < need:
            if not self._evict_one(protect):
                return False
        return True

    def _frees(self, pages: tuple[int, ...] | list[int]) -> bool:
        return any(self.pool.refcount(p) == 1 for p in pages)

    def _evict_one(self, protect: bytes | None) -> bool:
        """Evict the least recently used entry whose pages would actually be freed."""
        groups = [(g.last_used, -g.depth, 0, g.digest) for g in self.groups.values()
                  if g.pins == 0 and g.digest != protect and self._frees(g.pages)]
        leaves = [(b.last_used, -b.depth, 1, b.digest) for b in self.blocks.values()
                  if b.pins == 0 and b.children == 0 and b.digest != protect
                  and self.groups.get(b.digest, _UNPINNED).pins == 0 and self._frees(b.pages)]
        if not groups and not leaves:
            return False
        _, _, is_block, digest = min(groups + leaves)
        if digest in self.groups:
            self._drop_group(digest)
        if is_block:
            b = self.blocks.pop(digest)
            self.pool.free(b.pages)
            if b.parent is not None:
                self.blocks[b.parent].children -= 1
        return True

    def _drop_group(self, digest: bytes) -> None:
        g = self.groups.pop(digest)
        self.pool.free(g.pages)
        self.evicted_groups.add(digest)

    # ---- invariants -----------------------------------------------------------------------
    def held_pages(self) -> dict[PageKind, int]:
        return {PageKind.MLA_KV: sum(len(b.pages) for b in self.blocks.values()),
                PageKind.KDA_STATE: sum(len(g.pages) for g in self.groups.values())}

    def check(self) -> None:
        children: dict[bytes, int] = {}
        for b in self.blocks.values():
            if b.pins < 0 or any(self.pool.refcount(p) < 1 for p in b.pages):
                raise ParamError(f"block at depth {b.depth}: pins {b.pins} or a freed page")
            if b.parent is not None:
                if b.parent not in self.blocks:
                    raise ParamError(f"block at depth {b.depth} outlived its parent")
                children[b.parent] = children.get(b.parent, 0) + 1
        for b in self.blocks.values():
            if b.children != children.get(b.digest, 0):
                raise ParamError(f"block at depth {b.depth}: child count {b.children}")
        for g in self.groups.values():
            if g.digest not in self.blocks or g.pins < 0:
                raise ParamError(f"group at depth {g.depth} has no block or pins {g.pins}")
            if any(self.pool.refcount(p) < 1 for p in g.pages):
                raise ParamError(f"group at depth {g.depth} holds a freed page")


class _Unpinned:
    pins = 0


_UNPINNED = _Unpinned()
