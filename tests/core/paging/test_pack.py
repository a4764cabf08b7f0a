"""pack_heads / unpack_heads and the memory ledger, with numbers worked by hand.

Pinned: bit-exact round trips in float32 and bfloat16; a head never spans two pages; a page
smaller than one head is a clear error; K3 geometry (reference §7): a 512-token page is
576 KiB = 9 fp32 heads (18 bf16), so a layer's 96 heads take 11 pages fp32 (10 full + 6 heads)
and 6 bf16; the toy ledger and its crossover length, worked below.
"""

from __future__ import annotations

import pytest
import torch

from core.errors import ParamError
from core.model.config import TOY
from core.paging.ledger import k3_geometry, toy_geometry
from core.paging.pack import (
    HeadLayout,
    blob_pages,
    pack_blob,
    pack_heads,
    unpack_blob,
    unpack_heads,
)
from core.paging.pool import PageKind, PagePool


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize(("H", "K", "V", "page_bytes"), [
    (4, 32, 32, 8192), (5, 16, 8, 1100), (3, 4, 4, 64), (1, 8, 8, 4096)])
def test_round_trip_is_bit_exact(dtype, H, K, V, page_bytes):
    pool = PagePool(16, page_bytes)
    state = torch.randn(H, K, V, generator=torch.Generator().manual_seed(H)).to(dtype)
    head = K * V * state.element_size()
    pages = pool.alloc(PageKind.KDA_STATE, HeadLayout(H, head, page_bytes).pages)
    pack_heads(pool, pages, state)
    back = unpack_heads(pool, pages, H, K, V, dtype)
    assert back.dtype == dtype and torch.equal(back.view(torch.uint8), state.view(torch.uint8))


def test_a_head_never_spans_two_pages():
    layout = HeadLayout(H=7, head_bytes=300, page_bytes=1000)  # 3 heads a page, 100 B spare
    assert (layout.per_page, layout.pages) == (3, 3)
    for h in range(7):
        page, off = layout.where(h)
        assert off + 300 <= 1000 and page == h // 3
    assert layout.wasted_bytes == 3 * 1000 - 7 * 300


def test_page_smaller_than_a_head_is_rejected():
    with pytest.raises(ParamError, match="at least one whole KDA head of 4,096 B"):
        HeadLayout(H=4, head_bytes=4096, page_bytes=4095)


def test_blob_round_trip_across_pages():
    pool = PagePool(8, 100)
    x = torch.randn(3, 50)  # 600 B: 6 pages of 100
    pages = pool.alloc(PageKind.KDA_STATE, blob_pages(600, 100))
    pack_blob(pool, pages, x)
    assert len(pages) == 6 and torch.equal(unpack_blob(pool, pages, (3, 50), torch.float32), x)


def test_k3_geometry_matches_the_reference():
    g = k3_geometry()
    assert g.page_bytes == 512 * 1152 == 576 * 1024
    assert (g.heads.per_page, g.heads.pages) == (9, 11)
    assert HeadLayout(96, 128 * 128 * 2, g.page_bytes).pages == 6  # bf16
    assert g.kda_conv_bytes == 216 * 1024


def test_toy_ledger_by_hand():
    """Toy: one MLA latent is 32 floats = 128 B, so a 64-token page is 8 KiB; one KDA head is
    32 x 32 x 4 = 4 KiB, two a page, so S takes 2 pages; the conv tail is 3 x 384 x 4 = 4,608 B,
    one page: 3 pages per KDA layer, 18 for 6 layers. 1,000 tokens: 16 pages in each of 2 MLA
    layers + 18 = 50. The KDA state (6 x (16,384 + 4,608) = 125,952 B) equals 2 x 128 B per
    token of MLA latents at 492 tokens."""
    g = toy_geometry(TOY)
    assert g.page_bytes == 8192 and g.kda_pages_per_layer == 3 and g.kda_pages == 18
    assert g.pages(1000) == 50 and g.mla_pages(64) == 2 and g.mla_pages(65) == 4
    assert g.kda_bytes == 125_952 and g.crossover_tokens == 492
    assert g.mla_bytes(492) >= g.kda_bytes > g.mla_bytes(491)
