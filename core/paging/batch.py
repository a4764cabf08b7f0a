"""Many sequences' states moved between a PagePool and the model in one indexed copy per layer.

The byte layout is PagedSequence's (core/paging/sequence.py): an MLA page holds P latents of
one layer ([P, R] float32); a KDA layer's page group holds S in whole heads (pack_heads), then
the conv tail as one byte run (pack_blob). These functions read and write the same bytes for
G sequences at once (a batched step loads every request's state, runs, and stores it back), so
a state written here reads back through PagedSequence bit for bit, and the other way round.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from core.model.layers import KDAState
from core.paging.sequence import PagedSequence


def _float_pages(seq: PagedSequence) -> torch.Tensor:
    """The pool's arena as MLA blocks: [n_pages, P, R] float32 (a view)."""
    d = seq.dims
    return seq.pool.arena.view(torch.float32).view(seq.pool.n_pages, seq.P, d.kv_latent)


def read_kda(seqs: Sequence[PagedSequence], kda: int) -> KDAState:
    """KDA layer `kda` of every sequence: conv [G, W - 1, 3C], S [G, H, K, V] (fresh tensors)."""
    s0, G = seqs[0], len(seqs)
    d, geo = s0.dims, s0.geometry
    hp, per, hb = geo.heads.pages, geo.heads.per_page, geo.kda_head_bytes
    idx = torch.tensor([seq.kda_groups[kda] for seq in seqs])  # [G, pages per layer]
    raw = s0.pool.arena[idx]  # [G, n, page_bytes] uint8
    heads = raw[:, :hp, : per * hb].reshape(G, hp * per * hb)[:, : d.kda_heads * hb]
    S = heads.contiguous().view(torch.float32).view(G, d.kda_heads, d.kda_head_dim,
                                                    d.kda_head_dim)
    conv = raw[:, hp:].reshape(G, -1)[:, : geo.kda_conv_bytes].contiguous()
    conv = conv.view(torch.float32).view(G, d.conv_size - 1, 3 * d.kda_inner)
    return KDAState(conv, S)


def write_kda(seqs: Sequence[PagedSequence], kda: int, S: torch.Tensor,
              conv: torch.Tensor) -> None:
    """Store S [G, H, K, V] and conv [G, W - 1, 3C] into each sequence's page group `kda`."""
    s0, G = seqs[0], len(seqs)
    geo, pool = s0.geometry, s0.pool
    hp, per, hb = geo.heads.pages, geo.heads.per_page, geo.kda_head_bytes
    idx = torch.tensor([seq.kda_groups[kda] for seq in seqs])  # [G, n]
    heads = S.detach().contiguous().view(torch.uint8).view(G, -1)  # [G, H hb]
    heads = torch.nn.functional.pad(heads, (0, hp * per * hb - heads.shape[1]))
    pool.arena[:, : per * hb][idx[:, :hp].reshape(-1)] = heads.view(G * hp, per * hb)
    blob = conv.detach().contiguous().view(torch.uint8).view(G, -1)  # [G, conv bytes]
    cp = idx.shape[1] - hp
    blob = torch.nn.functional.pad(blob, (0, cp * pool.page_bytes - blob.shape[1]))
    pool.arena[idx[:, hp:].reshape(-1)] = blob.view(G * cp, pool.page_bytes)


def read_latents(seq: PagedSequence, mla: int, tokens: int) -> torch.Tensor:
    """[tokens, R]: the first `tokens` latents of MLA layer `mla` (a fresh tensor)."""
    n = -(-tokens // seq.P)
    if n == 0:
        return torch.zeros(0, seq.dims.kv_latent)
    blocks = _float_pages(seq)[torch.tensor(seq.mla_tables[mla][:n])]  # [n, P, R]
    return blocks.view(n * seq.P, -1)[:tokens]


def write_latents(seqs: Sequence[PagedSequence], mla: int, starts: Sequence[int],
                  latents: Sequence[torch.Tensor]) -> None:
    """latents[i] [T_i, R] -> tokens [starts[i], starts[i] + T_i) of sequence i's layer `mla`
    (its pages must exist)."""
    pages, offs = [], []
    for seq, start, lat in zip(seqs, starts, latents, strict=True):
        table = seq.mla_tables[mla]
        for t in range(start, start + lat.shape[0]):
            pages.append(table[t // seq.P])
            offs.append(t % seq.P)
    if pages:
        rows = torch.cat(list(latents)) if len(latents) > 1 else latents[0]
        _float_pages(seqs[0])[torch.tensor(pages), torch.tensor(offs)] = rows.detach()
