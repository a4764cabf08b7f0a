"""The memory ledger of a paged hybrid model: MLA pages grow with length, KDA state does not.

One page size for both kinds: a page holds `tokens_per_page` MLA latents of one layer, and a
KDA layer's state (S in whole heads, then its conv tail) takes a fixed group of such pages.
Both scales come from their dims dataclasses (ModelDims for the toy, core.dims.K3 for K3), so
every number here is derived, never typed in.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.dims import K3, K3Dims
from core.errors import check_int
from core.model.config import ModelDims
from core.paging.pack import HeadLayout, blob_pages


@dataclass(frozen=True, slots=True, kw_only=True)
class PagedGeometry:
    """Bytes and pages of one model at one page size (per sequence)."""

    name: str
    n_mla: int
    n_kda: int
    mla_token_bytes: int  # one token's latent KV in one MLA layer
    kda_heads: int
    kda_head_bytes: int  # one head of S
    kda_conv_bytes: int  # one layer's conv tail
    tokens_per_page: int

    @property
    def page_bytes(self) -> int:
        return self.tokens_per_page * self.mla_token_bytes

    @property
    def heads(self) -> HeadLayout:
        return HeadLayout(self.kda_heads, self.kda_head_bytes, self.page_bytes)

    @property
    def kda_state_bytes(self) -> int:
        """One layer's S (no conv)."""
        return self.kda_heads * self.kda_head_bytes

    @property
    def kda_pages_per_layer(self) -> int:
        """S in whole heads, then the conv tail on pages of its own."""
        return self.heads.pages + blob_pages(self.kda_conv_bytes, self.page_bytes)

    @property
    def kda_pages(self) -> int:
        return self.n_kda * self.kda_pages_per_layer

    def mla_pages(self, tokens: int) -> int:
        return self.n_mla * -(-check_int("tokens", tokens, 0) // self.tokens_per_page)

    def pages(self, tokens: int) -> int:
        return self.mla_pages(tokens) + self.kda_pages

    def mla_bytes(self, tokens: int) -> int:
        return self.n_mla * check_int("tokens", tokens, 0) * self.mla_token_bytes

    @property
    def kda_bytes(self) -> int:
        """Every KDA layer's S and conv tail: constant in the sequence length."""
        return self.n_kda * (self.kda_state_bytes + self.kda_conv_bytes)

    @property
    def crossover_tokens(self) -> int:
        """The shortest length at which the MLA latents outweigh the whole KDA state."""
        return -(-self.kda_bytes // (self.n_mla * self.mla_token_bytes))


def toy_geometry(dims: ModelDims, tokens_per_page: int = 64) -> PagedGeometry:
    return PagedGeometry(
        name="toy", n_mla=dims.n_mla, n_kda=dims.n_kda, mla_token_bytes=dims.mla_bytes_per_token,
        kda_heads=dims.kda_heads, kda_head_bytes=dims.kda_head_dim**2 * dims.bytes_per_param,
        kda_conv_bytes=dims.kda_conv_bytes,
        tokens_per_page=check_int("tokens_per_page", tokens_per_page, 1, 1 << 16),
    )


def k3_geometry(k3: K3Dims = K3, tokens_per_page: int = 512) -> PagedGeometry:
    return PagedGeometry(
        name="K3", n_mla=k3.n_mla, n_kda=k3.n_kda, mla_token_bytes=k3.mla_bytes_per_token,
        kda_heads=k3.kda_heads, kda_head_bytes=k3.kda_head_dim**2 * 4,  # fp32 S
        kda_conv_bytes=k3.kda_conv_bytes,
        tokens_per_page=check_int("tokens_per_page", tokens_per_page, 1, 1 << 16),
    )
