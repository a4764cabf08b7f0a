"""pack_heads / unpack_heads: a KDA state [H, K, V] in whole-head slices over fixed-size pages.

Layout (reference §7): heads_per_page = floor(page_bytes / head_bytes); head h lives in page
h // heads_per_page at byte offset (h % heads_per_page) * head_bytes; a head never spans two
pages; the last page may be partly empty. Bytes are copied as they are (a uint8 view), so the
round trip is bit-exact in every dtype. `pack_blob` / `unpack_blob` store any other tensor
(the conv tail) as a contiguous byte run over its own pages.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from core.errors import ParamError, check_int
from core.paging.pool import PagePool


@dataclass(frozen=True, slots=True)
class HeadLayout:
    """Where H heads of head_bytes each go in pages of page_bytes."""

    H: int
    head_bytes: int
    page_bytes: int

    def __post_init__(self) -> None:
        check_int("H", self.H, 1, 1 << 16)
        check_int("head_bytes", self.head_bytes, 1, 1 << 30)
        check_int("page_bytes", self.page_bytes, 1, 1 << 30)
        if self.page_bytes < self.head_bytes:
            raise ParamError(
                f"page_bytes must hold at least one whole KDA head of {self.head_bytes:,} B "
                f"(a head never spans two pages), got {self.page_bytes:,}"
            )

    @property
    def per_page(self) -> int:
        return self.page_bytes // self.head_bytes

    @property
    def pages(self) -> int:
        return -(-self.H // self.per_page)

    @property
    def wasted_bytes(self) -> int:
        """Bytes of the pages not holding a head (the tail of every page, the last page's rest)."""
        return self.pages * self.page_bytes - self.H * self.head_bytes

    def where(self, h: int) -> tuple[int, int]:
        """(page index within the group, byte offset) of head h."""
        check_int("h", h, 0, self.H - 1)
        return h // self.per_page, h % self.per_page * self.head_bytes


def blob_pages(nbytes: int, page_bytes: int) -> int:
    return -(-check_int("nbytes", nbytes, 0) // check_int("page_bytes", page_bytes, 1))


def _raw(x: torch.Tensor) -> torch.Tensor:
    return x.detach().contiguous().view(torch.uint8).reshape(-1)


def _check_pages(pool: PagePool, pages: list[int], want: int, what: str) -> None:
    if len(pages) != want:
        raise ParamError(f"{what} needs exactly {want} page(s), got {len(pages)}")


def pack_heads(pool: PagePool, pages: list[int], state: torch.Tensor) -> HeadLayout:
    """Write state [H, K, V] into pages (len == layout.pages); returns the layout used."""
    if not isinstance(state, torch.Tensor) or state.dim() != 3:
        raise ParamError(f"state must be a [H, K, V] tensor, got {getattr(state, 'shape', state)}")
    H = state.shape[0]
    layout = HeadLayout(H, state[0].numel() * state.element_size(), pool.page_bytes)
    _check_pages(pool, pages, layout.pages, f"a state of {H} heads")
    raw = _raw(state).view(H, layout.head_bytes)  # [H, head_bytes]
    for i, p in enumerate(pages):
        h0, h1 = i * layout.per_page, min(H, (i + 1) * layout.per_page)
        pool.page(p)[: (h1 - h0) * layout.head_bytes] = raw[h0:h1].reshape(-1)
    return layout


def unpack_heads(pool: PagePool, pages: list[int], H: int, K: int, V: int,
                 dtype: torch.dtype) -> torch.Tensor:
    """Read back the [H, K, V] state that pack_heads wrote (a fresh tensor)."""
    head_bytes = K * V * torch.empty((), dtype=dtype).element_size()
    layout = HeadLayout(H, head_bytes, pool.page_bytes)
    _check_pages(pool, pages, layout.pages, f"a state of {H} heads")
    out = torch.empty(H, K, V, dtype=dtype)
    raw = _raw(out).view(H, head_bytes)  # writes go through to `out`
    for i, p in enumerate(pages):
        h0, h1 = i * layout.per_page, min(H, (i + 1) * layout.per_page)
        raw[h0:h1] = pool.page(p)[: (h1 - h0) * head_bytes].view(h1 - h0, head_bytes)
    return out


def pack_blob(pool: PagePool, pages: list[int], x: torch.Tensor) -> None:
    """Write any tensor's bytes as one contiguous run over pages."""
    raw = _raw(x)
    _check_pages(pool, pages, blob_pages(raw.numel(), pool.page_bytes), f"{raw.numel():,} B")
    for i, p in enumerate(pages):
        chunk = raw[i * pool.page_bytes : (i + 1) * pool.page_bytes]
        pool.page(p)[: chunk.numel()] = chunk


def unpack_blob(pool: PagePool, pages: list[int], shape: tuple[int, ...],
                dtype: torch.dtype) -> torch.Tensor:
    out = torch.empty(shape, dtype=dtype)
    raw = _raw(out)
    _check_pages(pool, pages, blob_pages(raw.numel(), pool.page_bytes), f"{raw.numel():,} B")
    for i, p in enumerate(pages):
        n = min(pool.page_bytes, raw.numel() - i * pool.page_bytes)
        raw[i * pool.page_bytes : i * pool.page_bytes + n] = pool.page(p)[:n]
    return out
