"""What the Page pool tab draws, computed on a real PagePool: growth, a stored state, a pack.

  page_growth     one PagedSequence grown token by token: pages in use by kind at every length
  prefill_state   the model's DecodeState after a prompt (the bytes the pages will hold)
  store_in_pages  that state written into a PagedSequence and read back: which physical page
                  holds what (per layer), both states' tensors and the round trip's max |diff|
                  (0: bit for bit)
  pack_roundtrip  every KDA layer's S packed in whole heads (pack_heads) and unpacked again:
                  the head -> (page, offset) layout, both sides and the live max |diff|
  pages_crossover_tokens   where MLA pages overtake the KDA page groups (the ledger, in pages)

Results are frozen records; tensors in them are copies the caller must not modify.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from core.errors import ParamError, check_choice, check_int
from core.model.config import ModelDims
from core.model.layers import KDAState, MLAState
from core.model.model import DecodeState, HybridLM
from core.paging.ledger import PagedGeometry, toy_geometry
from core.paging.pack import HeadLayout, pack_heads, unpack_heads
from core.paging.pool import PageKind, PagePool
from core.paging.sequence import PagedSequence
from core.tolerances import max_abs

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


@dataclass(frozen=True, slots=True, kw_only=True)
class PageGrowth:
    """Pages in use after growing one sequence to each length 0..max_tokens."""

    tokens_per_page: int
    pool_pages: int
    mla_pages: tuple[int, ...]  # index = length in tokens
    kda_pages: tuple[int, ...]
    matches_ledger: bool  # the pool's count equals PagedGeometry.pages(length) at every length

    @property
    def max_tokens(self) -> int:
        return len(self.mla_pages) - 1

    @property
    def mla_overtakes_kda(self) -> int | None:
        """The shortest length whose MLA pages outnumber the (constant) KDA pages."""
        return next((t for t, (m, k) in enumerate(zip(self.mla_pages, self.kda_pages,
                                                      strict=True)) if m > k), None)


def page_growth(dims: ModelDims, tokens_per_page: int, max_tokens: int,
                pool_pages: int) -> PageGrowth:
    """Allocate the KDA page groups once, then grow the MLA block tables one token at a time."""
    max_tokens = check_int("max_tokens", max_tokens, 1, 1 << 16)
    geo = toy_geometry(dims, tokens_per_page)
    pool = PagePool(pool_pages, geo.page_bytes)
    seq = PagedSequence(pool, dims, tokens_per_page)
    seq.allocate_state()
    mla, kda, ok = [], [], True
    for t in range(max_tokens + 1):
        seq.grow(t)
        used = pool.used_by_kind()
        mla.append(used[PageKind.MLA_KV])
        kda.append(used[PageKind.KDA_STATE])
        ok &= used[PageKind.MLA_KV] + used[PageKind.KDA_STATE] == geo.pages(t)
    pool.check()
    return PageGrowth(tokens_per_page=tokens_per_page, pool_pages=pool_pages, mla_pages=tuple(mla),
                      kda_pages=tuple(kda), matches_ledger=ok)


@torch.no_grad()
def prefill_state(model: HybridLM, prompt: bytes) -> DecodeState:
    """The decode state after one prefill of `prompt` (a fresh state; the caller owns it)."""
    if not isinstance(prompt, bytes) or not prompt:
        raise ParamError(f"prompt must be non-empty bytes, got {type(prompt).__name__}")
    state = model.new_state(1)
    model.forward(torch.tensor([list(prompt)], dtype=torch.long), state)  # [1, T]
    return state


@dataclass(frozen=True, slots=True, kw_only=True)
class PageCell:
    """One physical page of a stored sequence: who owns it and how full it is."""

    layer: int  # model layer index
    kind: PageKind
    page: int  # physical page id in the pool
    what: str  # "block 2", "S heads 0-1", "conv tail"
    fill: float  # fraction of the page's bytes holding data (0..1]


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredSequence:
    tokens: int
    tokens_per_page: int
    pool_pages: int
    layer_kinds: tuple[str, ...]
    cells: tuple[PageCell, ...]  # layer by layer, in block / group order
    free_pages: int
    stored: tuple[torch.Tensor, ...]  # every layer's state tensors as written (MLA latent; S, conv)
    read_back: tuple[torch.Tensor, ...]  # the same, read back from the pages

    @property
    def max_abs_roundtrip(self) -> float:
        """DecodeState -> pages -> DecodeState, over every layer."""
        return max(max_abs(a, b) for a, b in zip(self.stored, self.read_back, strict=True))

    def layer_cells(self, layer: int) -> tuple[PageCell, ...]:
        return tuple(c for c in self.cells if c.layer == layer)


def _state_tensors(state: DecodeState) -> list[torch.Tensor]:
    out = []
    for s in state.layers:
        out += [s.latent] if isinstance(s, MLAState) else [s.S, s.conv]
    return out


def store_in_pages(dims: ModelDims, state: DecodeState, tokens_per_page: int,
                   pool_pages: int) -> StoredSequence:
    """Write `state` into a fresh pool through PagedSequence, read it back, map the pages."""
    geo = toy_geometry(dims, tokens_per_page)
    pool = PagePool(pool_pages, geo.page_bytes)
    seq = PagedSequence(pool, dims, tokens_per_page)
    seq.allocate_state()
    seq.store(state)
    back = seq.load(list(state.tokens[0]))
    cells: list[PageCell] = []
    heads, hp = geo.heads, geo.heads.pages
    mla = kda = 0
    for layer, kind in enumerate(dims.layer_kinds):
        if kind == "mla":
            table = seq.mla_tables[mla]
            for b, p in enumerate(table):
                n = min(tokens_per_page, state.pos - b * tokens_per_page)
                cells.append(PageCell(layer=layer, kind=PageKind.MLA_KV, page=p, what=f"block {b}",
                                      fill=n / tokens_per_page))
            mla += 1
        else:
            group = seq.kda_groups[kda]
            for i, p in enumerate(group[:hp]):
                h0, h1 = i * heads.per_page, min(heads.H, (i + 1) * heads.per_page)
                what = f"S head {h0}" if h1 - h0 == 1 else f"S heads {h0}-{h1 - 1}"
                cells.append(PageCell(layer=layer, kind=PageKind.KDA_STATE, page=p, what=what,
                                      fill=(h1 - h0) * heads.head_bytes / geo.page_bytes))
            conv_left = geo.kda_conv_bytes
            for p in group[hp:]:
                n = min(geo.page_bytes, conv_left)
                conv_left -= n
                cells.append(PageCell(layer=layer, kind=PageKind.KDA_STATE, page=p,
                                      what="conv tail", fill=n / geo.page_bytes))
            kda += 1
    pool.check()
    return StoredSequence(tokens=state.pos, tokens_per_page=tokens_per_page, pool_pages=pool_pages,
                          layer_kinds=dims.layer_kinds, cells=tuple(cells),
                          free_pages=pool.num_free,
                          stored=tuple(t.clone() for t in _state_tensors(state)),
                          read_back=tuple(_state_tensors(back)))


@dataclass(frozen=True, slots=True, kw_only=True)
class PackRoundTrip:
    """Every KDA layer's S through pack_heads / unpack_heads; layer 0's layout is drawn."""

    dtype: str
    layout: HeadLayout
    slots: tuple[tuple[int, int], ...]  # head -> (page within the group, byte offset)
    page_ids: tuple[int, ...]  # the physical pages of layer 0's group
    packed: tuple[torch.Tensor, ...]  # [H, K, V] per KDA layer, as packed (in dtype)
    unpacked: tuple[torch.Tensor, ...]  # [H, K, V] per KDA layer, unpacked from the pages

    @property
    def layers(self) -> int:
        return len(self.packed)

    @property
    def state(self) -> torch.Tensor:
        """[H, K, V] layer 0's S as packed (the one drawn)."""
        return self.packed[0]

    @property
    def max_abs_diff(self) -> float:
        """Over every layer, unpacked vs packed."""
        return max(max_abs(a, b) for a, b in zip(self.packed, self.unpacked, strict=True))

    @property
    def bit_exact(self) -> bool:
        """Every layer's bytes identical."""
        return all(torch.equal(a.view(torch.uint8), b.view(torch.uint8))
                   for a, b in zip(self.packed, self.unpacked, strict=True))

    @property
    def no_split_head(self) -> bool:
        return all(off + self.layout.head_bytes <= self.layout.page_bytes
                   for _, off in self.slots)


def pack_roundtrip(states: list[torch.Tensor], page_bytes: int, dtype: str) -> PackRoundTrip:
    """states: one [H, K, V] float tensor per KDA layer, cast to `dtype`, then packed into pages
    of `page_bytes` (one page group per layer, one pool) and unpacked."""
    dt = DTYPES[check_choice("dtype", dtype, tuple(DTYPES))]
    if not states:
        raise ParamError("states must hold at least one KDA layer's S")
    xs = [s.detach().to(dt).contiguous() for s in states]  # [H, K, V] each
    H, K, V = xs[0].shape
    layout = HeadLayout(H, K * V * xs[0].element_size(), page_bytes)
    pool = PagePool(layout.pages * len(xs), page_bytes)
    groups = [pool.alloc(PageKind.KDA_STATE, layout.pages, "a KDA state") for _ in xs]
    for g, x in zip(groups, xs, strict=True):
        pack_heads(pool, g, x)
    backs = [unpack_heads(pool, g, H, K, V, dt) for g in groups]
    pool.check()
    return PackRoundTrip(dtype=dtype, layout=layout, slots=tuple(layout.where(h) for h in range(H)),
                         page_ids=tuple(groups[0]), packed=tuple(x.clone() for x in xs),
                         unpacked=tuple(backs))


def pages_crossover_tokens(geo: PagedGeometry) -> int:
    """The shortest length whose MLA pages outnumber the KDA page groups (page-rounded, so
    later than geo.crossover_tokens, the byte crossover)."""
    blocks = geo.kda_pages // geo.n_mla + 1  # first per-layer block count with n_mla*b > kda
    return (blocks - 1) * geo.tokens_per_page + 1


def kda_states(state: DecodeState) -> list[torch.Tensor]:
    """Each KDA layer's S [H, K, V] (batch row 0) in layer order."""
    return [s.S[0] for s in state.layers if isinstance(s, KDAState)]
