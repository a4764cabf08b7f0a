"""The Page pool tab's engine runs: growth, a stored state, a pack round trip, the crossover.

Pinned: the pool's page count equals the ledger at every length and steps by n_mla exactly at
page boundaries while the KDA pages never move; a model state stored in pages reads back bit
for bit and each MLA table holds ceil(T / P) pages with the last one T - (n - 1) P full; every
KDA layer's S round trips bit for bit in float32 and bfloat16 with no head split, even when the
page is not a multiple of a head; pages_crossover_tokens equals a brute-force search.
"""

from __future__ import annotations

import pytest
import torch

from core.errors import ParamError
from core.model.config import TOY
from core.model.layers import MLAState
from core.paging.ledger import k3_geometry, toy_geometry
from core.paging.pool import PageKind
from core.paging.walkthrough import (
    kda_states,
    pack_roundtrip,
    page_growth,
    pages_crossover_tokens,
    prefill_state,
    store_in_pages,
)
from tests.core.model.conftest import TINY, tiny_model

TEXT = b"def f(x):\n    return x + 1\n" * 12  # 324 bytes


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def state():
    return prefill_state(tiny_model(1), TEXT[:150])


@pytest.mark.parametrize("P", [32, 48, 64, 100, 256])
def test_growth_steps_at_page_boundaries_and_kda_never_moves(P):
    g = page_growth(TOY, P, 1024, 128)
    geo = toy_geometry(TOY, P)
    assert [m + k for m, k in zip(g.mla_pages, g.kda_pages, strict=True)] == [
        geo.pages(t) for t in range(1025)]
    assert set(g.kda_pages) == {geo.kda_pages}
    for t in range(1, 1025):
        step = g.mla_pages[t] - g.mla_pages[t - 1]
        assert step == (TOY.n_mla if (t - 1) % P == 0 else 0), t
    cross = pages_crossover_tokens(geo)
    assert g.mla_overtakes_kda == (cross if cross <= 1024 else None)


def _brute_crossover(geo) -> int:
    return next(t for t in range(1, 1 << 22) if geo.mla_pages(t) > geo.kda_pages)


@pytest.mark.parametrize("geo", [toy_geometry(TOY, 64), toy_geometry(TOY, 80),
                                 toy_geometry(TINY, 64), k3_geometry(), k3_geometry(
                                     tokens_per_page=256), k3_geometry(tokens_per_page=1024)],
                         ids=["toy64", "toy80", "tiny64", "k3_512", "k3_256", "k3_1024"])
def test_pages_crossover_matches_a_search(geo):
    assert pages_crossover_tokens(geo) == _brute_crossover(geo)
    assert pages_crossover_tokens(geo) >= geo.crossover_tokens  # pages round the latents up


def test_k3_crossover_worked_by_hand():
    """K3, 512-token pages: 69 layers x 12 pages = 828 KDA pages; 24 MLA layers need 35 blocks
    each (840 > 828) to outnumber them: from 34 * 512 + 1 tokens."""
    assert pages_crossover_tokens(k3_geometry()) == 34 * 512 + 1


@pytest.mark.parametrize("P", [32, 64, 100])
def test_stored_state_reads_back_bit_for_bit(state, P):
    s = store_in_pages(TINY, state, P, 64)
    written = [t for layer in state.layers
               for t in ((layer.latent,) if isinstance(layer, MLAState) else (layer.S, layer.conv))]
    assert len(s.stored) == len(s.read_back) == len(written)
    assert all(torch.equal(a, b) for a, b in zip(written, s.stored, strict=True))
    assert all(torch.equal(a, b) for a, b in zip(written, s.read_back, strict=True))
    n = -(-150 // P)
    for layer, kind in enumerate(TINY.layer_kinds):
        cells = s.layer_cells(layer)
        if kind == "mla":
            assert [c.kind for c in cells] == [PageKind.MLA_KV] * n
            assert cells[-1].fill == pytest.approx((150 - (n - 1) * P) / P)
        else:
            assert len(cells) == toy_geometry(TINY, P).kda_pages_per_layer
    pages = [c.page for c in s.cells]
    assert len(set(pages)) == len(pages) == 64 - s.free_pages


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("page_bytes", [1024, 1536, 2560, 4096])
def test_pack_roundtrip_is_exact_and_never_splits_a_head(state, dtype, page_bytes):
    rt = pack_roundtrip(kda_states(state), page_bytes, dtype)
    dt = getattr(torch, dtype)
    assert len(rt.packed) == len(rt.unpacked) == rt.layers == TINY.n_kda
    for s, a, b in zip(kda_states(state), rt.packed, rt.unpacked, strict=True):
        assert torch.equal(a, s.to(dt)) and a.dtype == b.dtype == dt
        assert torch.equal(a.view(torch.uint8), b.view(torch.uint8))
    head = TINY.kda_head_dim**2 * (4 if dtype == "float32" else 2)
    # no head split across pages: every head's bytes end on the page they start on
    assert all(off + head <= page_bytes for _, off in rt.slots)
    assert rt.layout.per_page == page_bytes // head
    assert rt.slots == tuple(rt.layout.where(h) for h in range(TINY.kda_heads))
    assert rt.state.dtype == getattr(torch, dtype)


def test_bad_input_names_the_parameter(state):
    with pytest.raises(ParamError, match="dtype"):
        pack_roundtrip(kda_states(state), 4096, "float16")
    with pytest.raises(ParamError, match="page_bytes"):
        pack_roundtrip(kda_states(state), 512, "float32")  # smaller than one head (1 KiB)
    with pytest.raises(ParamError, match="prompt"):
        prefill_state(tiny_model(1), b"")
