"""Batched page moves (core/paging/batch.py) read and write PagedSequence's bytes exactly.

Pinned, for the tiny dims and for dims whose heads leave a gap at each page's end (20 x 20
heads in 2 KiB pages): states written one sequence at a time through PagedSequence read back
bit for bit through the batched reads, and states written through the batched writes read
back bit for bit through PagedSequence; latents likewise, across page boundaries.
"""

from __future__ import annotations

import pytest
import torch

from core.model.config import ModelDims
from core.model.layers import KDAState
from core.paging import batch as paged
from core.paging.pool import PagePool
from core.paging.sequence import PagedSequence
from tests.core.model.conftest import TINY

GAPPY = ModelDims(d_model=32, n_layers=4, kda_heads=3, kda_head_dim=20, gate_rank=4,
                  mla_heads=2, mla_head_dim=16, kv_latent=8, n_experts=8, top_k=2,
                  expert_inner=16, shared_inner=32, context=64)
P = 64


def _seqs(dims: ModelDims, n: int, tokens: int) -> list[PagedSequence]:
    pool = PagePool(400, P * dims.mla_bytes_per_token)
    pool.arena.random_(0, 256, generator=torch.Generator().manual_seed(1))  # stale bytes
    seqs = []
    for _ in range(n):
        s = PagedSequence(pool, dims, P)
        s.allocate_state()
        s.grow(tokens)
        seqs.append(s)
    return seqs


def _state(dims: ModelDims, G: int, seed: int) -> list[KDAState]:
    g = torch.Generator().manual_seed(seed)
    return [KDAState(torch.randn(G, dims.conv_size - 1, 3 * dims.kda_inner, generator=g),
                     torch.randn(G, dims.kda_heads, dims.kda_head_dim, dims.kda_head_dim,
                                 generator=g)) for _ in range(dims.n_kda)]


@pytest.mark.parametrize("dims", [TINY, GAPPY], ids=["tiny", "heads-leave-a-gap"])
def test_kda_round_trips_both_ways(dims):
    seqs = _seqs(dims, 3, 10)
    want = _state(dims, 3, 0)
    for i, s in enumerate(seqs):
        for layer, st in enumerate(want):
            s.write_kda(layer, KDAState(st.conv[i : i + 1], st.S[i : i + 1]))
    got = paged.read_kda(seqs)
    for a, b in zip(got, want, strict=True):
        assert torch.equal(a.S, b.S) and torch.equal(a.conv, b.conv)
    again = _state(dims, 3, 1)
    paged.write_kda(seqs, [(st.S, st.conv) for st in again])
    for i, s in enumerate(seqs):
        for layer, st in enumerate(again):
            one = s.read_kda(layer)
            assert torch.equal(one.S, st.S[i : i + 1]) and torch.equal(one.conv, st.conv[i : i + 1])


def test_latents_round_trip_across_page_boundaries():
    seqs = _seqs(TINY, 2, 200)
    g = torch.Generator().manual_seed(2)
    first = [torch.randn(130, TINY.kv_latent, generator=g), torch.randn(7, TINY.kv_latent,
                                                                         generator=g)]
    paged.write_latents(seqs, 0, [0, 0], first)
    more = [torch.randn(3, TINY.kv_latent, generator=g), torch.randn(60, TINY.kv_latent,
                                                                        generator=g)]
    paged.write_latents(seqs, 0, [130, 7], more)
    got = paged.read_latents(seqs, 0, [133, 67])
    for s, a, b, x in zip(seqs, first, more, got, strict=True):
        want = torch.cat([a, b])
        assert torch.equal(x, want)
        s.length = want.shape[0]
        assert torch.equal(s.read_latents(0, want.shape[0])[0], want)
