"""PagePool: one pool of fixed-size pages shared by every kind of serving state.

Contract (reference §7, nano-vllm's BlockManager as the model):
  * N pages of `page_bytes` bytes each, one free list, one byte arena [N, page_bytes] uint8.
  * A page in use has a kind (MLA_KV or KDA_STATE) and a reference count >= 1; `incref`
    shares it (a prefix block used by several requests), `free` decrements and returns the
    page to the free list at 0. A page's kind is fixed while it is in use.
  * `alloc(kind, n)` succeeds whole or raises OutOfPages and leaves the pool unchanged.
  * Freeing a free page (double free) or a page id outside the pool raises PageError.
  * `check()` verifies free + used == total, no page both free and used, no page twice on the
    free list, and refcount >= 1 with a kind for every used page.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from enum import Enum

import torch

from core.errors import ParamError, check_int

MAX_PAGES = 1 << 20
MAX_PAGE_BYTES = 1 << 26


class PageKind(Enum):
    MLA_KV = "MLA_KV"
    KDA_STATE = "KDA_STATE"


class OutOfPages(RuntimeError):
    """An allocation that does not fit; the message names pages needed and free."""

    def __init__(self, needed: int, free: int, what: str = "") -> None:
        self.needed, self.free = needed, free
        suffix = f" for {what}" if what else ""
        super().__init__(f"out of pages{suffix}: {needed} needed, {free} free")


class PageError(RuntimeError):
    """A misuse of the pool: double free, a foreign page id, a kind mismatch, a broken invariant."""


class PagePool:
    def __init__(self, n_pages: int, page_bytes: int) -> None:
        self.n_pages = check_int("n_pages", n_pages, 1, MAX_PAGES)
        self.page_bytes = check_int("page_bytes", page_bytes, 1, MAX_PAGE_BYTES)
        self.arena = torch.zeros(self.n_pages, self.page_bytes, dtype=torch.uint8)
        self._free: deque[int] = deque(range(self.n_pages))
        self._ref = [0] * self.n_pages
        self._kind: list[PageKind | None] = [None] * self.n_pages

    # ---- queries --------------------------------------------------------------------------
    @property
    def num_free(self) -> int:
        return len(self._free)

    @property
    def num_used(self) -> int:
        return self.n_pages - len(self._free)

    def can_alloc(self, n: int) -> bool:
        return 0 <= n <= len(self._free)

    def refcount(self, page: int) -> int:
        return self._ref[self._valid(page)]

    def kind(self, page: int) -> PageKind | None:
        return self._kind[self._valid(page)]

    def used_by_kind(self) -> dict[PageKind, int]:
        counts = dict.fromkeys(PageKind, 0)
        for k in self._kind:
            if k is not None:
                counts[k] += 1
        return counts

    # ---- ask, then commit -----------------------------------------------------------------
    def alloc(self, kind: PageKind, n: int, what: str = "") -> list[int]:
        if not isinstance(kind, PageKind):
            raise ParamError(f"kind must be a PageKind {[k.name for k in PageKind]}, got {kind!r}")
        n = check_int("n", n, 0, MAX_PAGES)
        if n > len(self._free):
            raise OutOfPages(n, len(self._free), what)
        pages = [self._free.popleft() for _ in range(n)]
        for p in pages:
            self._ref[p], self._kind[p] = 1, kind
        return pages

    def incref(self, pages: Iterable[int]) -> None:
        pages = list(pages)
        for p in pages:
            if self._ref[self._valid(p)] == 0:
                raise PageError(f"incref of free page {p}")
        for p in pages:
            self._ref[p] += 1

    def free(self, pages: Iterable[int]) -> None:
        """Drop one reference from each page; pages reaching 0 return to the free list."""
        pages = list(pages)
        need: dict[int, int] = {}
        for p in pages:
            need[self._valid(p)] = need.get(p, 0) + 1
        for p, n in need.items():  # validate everything first: a bad free changes nothing
            if self._ref[p] < n:
                raise PageError(f"double free of page {p} (refcount {self._ref[p]}, freed {n}x)")
        for p in pages:
            self._ref[p] -= 1
            if self._ref[p] == 0:
                self._kind[p] = None
                self._free.append(p)

    # ---- bytes ----------------------------------------------------------------------------
    def page(self, page: int) -> torch.Tensor:
        """The bytes of one used page: a [page_bytes] uint8 view into the arena."""
        if self._ref[self._valid(page)] == 0:
            raise PageError(f"page {page} is free")
        return self.arena[page]

    # ---- invariants -----------------------------------------------------------------------
    def check(self) -> None:
        free = list(self._free)
        if len(set(free)) != len(free):
            raise PageError("a page is on the free list twice")
        used = [p for p in range(self.n_pages) if self._ref[p] > 0]
        if set(free) & set(used):
            raise PageError(f"pages both free and used: {sorted(set(free) & set(used))[:8]}")
        if len(free) + len(used) != self.n_pages:
            raise PageError(f"free {len(free)} + used {len(used)} != total {self.n_pages}")
        for p in range(self.n_pages):
            if (self._ref[p] > 0) != (self._kind[p] is not None) or self._ref[p] < 0:
                raise PageError(f"page {p}: refcount {self._ref[p]}, kind {self._kind[p]}")

    def _valid(self, page: object) -> int:
        if isinstance(page, bool) or not isinstance(page, int) or not 0 <= page < self.n_pages:
            raise PageError(f"page id must be an int in [0, {self.n_pages - 1}], got {page!r}")
        return page
