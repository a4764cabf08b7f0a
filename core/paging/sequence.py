"""PagedSequence: one request's decode state stored in a PagePool (batch of one sequence).

MLA layers keep a block table each: page i holds latents of tokens [i P, (i + 1) P) (P =
tokens_per_page), one [P, R] float block per page. KDA layers keep a fixed page group each:
S packed in whole heads (pack_heads), then the conv tail (pack_blob). A request may start from
blocks borrowed from the prefix cache (`adopt`, refcount +1); everything it owns or borrows is
released by `release`. `load` and `store` convert between the pages and the model's
DecodeState; the round trip is bit-exact.
"""

from __future__ import annotations

import torch

from core.errors import ParamError
from core.model.config import ModelDims
from core.model.layers import KDAState, MLAState
from core.model.model import DecodeState
from core.paging.ledger import PagedGeometry, toy_geometry
from core.paging.pack import pack_blob, pack_heads, unpack_blob, unpack_heads
from core.paging.pool import PageKind, PagePool


class PagedSequence:
    def __init__(self, pool: PagePool, dims: ModelDims, tokens_per_page: int) -> None:
        self.pool, self.dims = pool, dims
        self.geometry: PagedGeometry = toy_geometry(dims, tokens_per_page)
        if self.geometry.page_bytes != pool.page_bytes:
            raise ParamError(
                f"pool page_bytes must be tokens_per_page x MLA latent bytes = "
                f"{self.geometry.page_bytes}, got {pool.page_bytes}"
            )
        self.P = tokens_per_page
        self.mla_tables: list[list[int]] = [[] for _ in range(dims.n_mla)]
        self.kda_groups: list[list[int]] = []
        self.length = 0  # tokens whose latents are stored

    # ---- pages ----------------------------------------------------------------------------
    def pages_needed(self, tokens: int, reused_blocks: int = 0) -> int:
        """Pages this sequence must allocate to hold `tokens`, given `reused_blocks` adopted."""
        own_blocks = max(0, -(-tokens // self.P) - reused_blocks)
        return self.dims.n_mla * own_blocks + self.geometry.kda_pages

    def allocate_state(self) -> None:
        """The KDA page groups (constant size, whatever the length)."""
        per = self.geometry.kda_pages_per_layer
        pages = self.pool.alloc(PageKind.KDA_STATE, self.dims.n_kda * per, "KDA state")
        self.kda_groups = [pages[i * per : (i + 1) * per] for i in range(self.dims.n_kda)]

    def adopt(self, blocks: list[tuple[int, ...]]) -> None:
        """Borrow full prefix blocks (one page per MLA layer each) from the prefix cache."""
        if self.length:
            raise ParamError("adopt must come before any token is stored")
        for pages in blocks:
            self.pool.incref(pages)
            for table, p in zip(self.mla_tables, pages, strict=True):
                table.append(p)
        self.length = len(blocks) * self.P

    def grow(self, tokens: int) -> None:
        """Make room for `tokens` tokens of latents in every MLA layer."""
        need = -(-tokens // self.P) - len(self.mla_tables[0]) if self.mla_tables else 0
        if need > 0:
            pages = self.pool.alloc(PageKind.MLA_KV, need * self.dims.n_mla, "MLA pages")
            for i, table in enumerate(self.mla_tables):
                table.extend(pages[i * need : (i + 1) * need])

    def block_pages(self, block: int) -> tuple[int, ...]:
        """The pages of block `block` across the MLA layers (what the prefix cache retains)."""
        return tuple(table[block] for table in self.mla_tables)

    def release(self) -> None:
        pages = [p for t in self.mla_tables for p in t] + [p for g in self.kda_groups for p in g]
        self.pool.free(pages)
        self.mla_tables = [[] for _ in range(self.dims.n_mla)]
        self.kda_groups, self.length = [], 0

    # ---- bytes <-> DecodeState ------------------------------------------------------------
    def _block(self, page: int) -> torch.Tensor:
        return self.pool.page(page).view(torch.float32).view(self.P, self.dims.kv_latent)

    def write_latents(self, mla: int, latent: torch.Tensor, start: int) -> None:
        """latent [T, R] -> tokens [start, start + T) of MLA layer `mla` (pages must exist)."""
        t = start
        while t < start + latent.shape[0]:
            blk, off = divmod(t, self.P)
            n = min(self.P - off, start + latent.shape[0] - t)
            rows = latent[t - start : t - start + n]  # [n, R]
            self._block(self.mla_tables[mla][blk])[off : off + n] = rows
            t += n

    def read_latents(self, mla: int, tokens: int) -> torch.Tensor:
        """[1, tokens, R]: the first `tokens` latents of MLA layer `mla`."""
        n_blocks = -(-tokens // self.P)
        blocks = [self._block(p) for p in self.mla_tables[mla][:n_blocks]]
        if not blocks:
            return torch.zeros(1, 0, self.dims.kv_latent)
        return torch.cat(blocks, 0)[:tokens].unsqueeze(0)

    def write_kda(self, kda: int, state: KDAState) -> None:
        g = self.geometry
        group = self.kda_groups[kda]
        pack_heads(self.pool, group[: g.heads.pages], state.S[0])
        pack_blob(self.pool, group[g.heads.pages :], state.conv[0])

    def read_kda(self, kda: int) -> KDAState:
        d, g = self.dims, self.geometry
        group = self.kda_groups[kda]
        S = unpack_heads(self.pool, group[: g.heads.pages], d.kda_heads, d.kda_head_dim,
                         d.kda_head_dim, torch.float32)
        conv = unpack_blob(self.pool, group[g.heads.pages :],
                           (d.conv_size - 1, 3 * d.kda_inner), torch.float32)
        return KDAState(conv.unsqueeze(0), S.unsqueeze(0))

    def load(self, tokens: list[int]) -> DecodeState:
        """The DecodeState at the stored length (tokens: the sequence so far, for the record)."""
        if len(tokens) != self.length:
            raise ParamError(f"tokens must hold the {self.length} stored tokens, got {len(tokens)}")
        layers: list[KDAState | MLAState] = []
        mla = kda = 0
        for kind in self.dims.layer_kinds:
            if kind == "mla":
                layers.append(MLAState(self.read_latents(mla, self.length)))
                mla += 1
            else:
                layers.append(self.read_kda(kda))
                kda += 1
        return DecodeState(layers, pos=self.length, tokens=[list(tokens)])

    def store(self, state: DecodeState) -> None:
        """Write a state advanced from the stored length: new latents, every KDA state."""
        end = state.pos
        self.grow(end)
        mla = kda = 0
        for s in state.layers:
            if isinstance(s, MLAState):
                self.write_latents(mla, s.latent[0, self.length : end], self.length)
                mla += 1
            else:
                self.write_kda(kda, s)
                kda += 1
        self.length = end
