"""PagedSequence: a DecodeState stored in pages and read back bit for bit."""

from __future__ import annotations

import torch

from core.model.layers import KDAState, MLAState
from core.paging.pool import PagePool
from core.paging.sequence import PagedSequence
from tests.core.model.conftest import TINY, tiny_model


def _equal_states(a, b) -> bool:
    for x, y in zip(a.layers, b.layers, strict=True):
        if isinstance(x, KDAState):
            if not (torch.equal(x.S, y.S) and torch.equal(x.conv, y.conv)):
                return False
        elif not torch.equal(x.latent, y.latent):
            return False
    return True


@torch.no_grad()
def test_store_then_load_is_bit_exact_across_page_boundaries():
    model = tiny_model()
    P = 64
    pool = PagePool(64, P * TINY.mla_bytes_per_token)
    seq = PagedSequence(pool, TINY, P)
    seq.allocate_state()
    tokens = list(range(100, 250))  # 150 tokens: 3 pages per MLA layer, the last partly used
    state = model.new_state(1)
    model.forward(torch.tensor([tokens[:130]]), state)
    seq.store(state)
    model.step(torch.tensor([tokens[130]]), state)
    seq.store(state)  # one more latent into the third page
    back = seq.load(tokens[:131])
    assert back.pos == 131 and _equal_states(state, back)
    assert [len(t) for t in seq.mla_tables] == [3] and isinstance(back.layers[-1], MLAState)
    seq.release()
    assert pool.num_free == 64
    pool.check()
