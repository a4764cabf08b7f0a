"""Many sequences' states moved between a PagePool and the model in one indexed copy.

The byte layout is PagedSequence's (core/paging/sequence.py): an MLA page holds P latents of
one layer ([P, R] float32); a KDA layer's page group holds S in whole heads (pack_heads), then
the conv tail as one byte run (pack_blob). These functions read and write the same bytes for
G sequences at once (a batched step loads every request's state, runs, and stores it back): the
KDA states of every layer of every sequence in one gather and one scatter, each MLA layer's
latents in one gather, so a state written here reads back through PagedSequence bit for bit,
and the other way round.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from core.model.layers import KDAState
from core.paging.sequence import PagedSequence


def _float_pages(seq: PagedSequence) -> torch.Tensor:
    """The pool's arena as MLA blocks: [n_pages, P, R] float32 (a view)."""
    return seq.pool.arena.view(torch.float32).view(seq.pool.n_pages, seq.P, seq.dims.kv_latent)


def _words(arena: torch.Tensor) -> torch.Tensor:
    """The arena [n_pages, page_bytes] uint8 as int64 words when pages are whole words: a
    gather or scatter then moves words instead of single bytes (the same bits)."""
    return arena.view(torch.int64) if arena.shape[1] % 8 == 0 else arena


def _tail_words(words: torch.Tensor, nbytes: int) -> torch.Tensor | None:
    """The first nbytes of every page as a view [n_pages, nbytes / word] when they are whole
    words (a byte run on one page each), else None."""
    size = words.element_size()
    return words[:, : nbytes // size] if nbytes % size == 0 else None


def _tail(words: torch.Tensor, pages: torch.Tensor, nbytes: int) -> torch.Tensor:
    """The byte run of nbytes on pages [G, L, n], as [G L, nbytes] bytes: one gather of the
    rows (index_select copies whole rows: several times faster than a [rows, cols] index)."""
    head = _tail_words(words, nbytes)
    if pages.shape[2] == 1 and head is not None:
        return head.index_select(0, pages.reshape(-1)).view(torch.uint8)  # [G L, nbytes]
    G, L = pages.shape[:2]
    return words.index_select(0, pages.reshape(-1)).view(torch.uint8).view(G * L, -1)[:, :nbytes]


def _kda_pages(seqs: Sequence[PagedSequence]) -> torch.Tensor:
    """[G, n_kda, pages per layer]: every sequence's KDA page groups."""
    return torch.tensor([seq.kda_groups for seq in seqs])


def read_kda(seqs: Sequence[PagedSequence]) -> list[KDAState]:
    """Every KDA layer's state of every sequence: per layer conv [G, W - 1, 3C] and
    S [G, H, K, V], from one gather of the heads' pages and one of the conv tails'."""
    s0, G = seqs[0], len(seqs)
    d, geo = s0.dims, s0.geometry
    hp, per, hb, pb = geo.heads.pages, geo.heads.per_page, geo.kda_head_bytes, s0.pool.page_bytes
    idx = _kda_pages(seqs)  # [G, L, n]
    words = _words(s0.pool.arena)
    heads = words.index_select(0, idx[:, :, :hp].reshape(-1)).view(torch.uint8)
    heads = heads.view(G, d.n_kda, hp, pb)
    if per * hb != pb:  # pages hold whole heads and a tail nobody uses
        heads = heads[..., : per * hb]
    heads = heads.reshape(G, d.n_kda, -1)[:, :, : d.kda_heads * hb]
    S = heads.view(torch.float32).view(G, d.n_kda, d.kda_heads, d.kda_head_dim, d.kda_head_dim)
    conv = _tail(words, idx[:, :, hp:], geo.kda_conv_bytes)  # [G L, conv bytes]
    conv = conv.view(G, d.n_kda, -1).view(torch.float32)
    conv = conv.view(G, d.n_kda, d.conv_size - 1, 3 * d.kda_inner)
    return [KDAState(conv[:, i], S[:, i]) for i in range(d.n_kda)]


def write_kda(seqs: Sequence[PagedSequence], states: Sequence[tuple[torch.Tensor, torch.Tensor]]
              ) -> None:
    """Store every KDA layer's (S [G, H, K, V], conv [G, W - 1, 3C]) into the sequences'
    page groups: when the heads fill their pages exactly and the tail is whole words on one
    page, one scatter per layer for each (no stacked copy); else one scatter for all the
    heads' pages and one for all the conv tails'."""
    s0, G = seqs[0], len(seqs)
    geo, pool = s0.geometry, s0.pool
    hp, per, hb, pb = geo.heads.pages, geo.heads.per_page, geo.kda_head_bytes, pool.page_bytes
    idx = _kda_pages(seqs)  # [G, L, n]
    L, cp = idx.shape[1], idx.shape[2] - hp
    words = _words(pool.arena)
    head = _tail_words(words, geo.kda_conv_bytes)
    if hp * per == s0.dims.kda_heads and per * hb == pb and cp == 1 and head is not None:
        # the heads fill their pages and the tail is whole words: each layer's S and tail go
        # straight from the forward's tensors, with no stacked copy of the batch's states
        for i, (S, conv) in enumerate(states):
            words.index_copy_(0, idx[:, i, :hp].reshape(-1),
                              S.contiguous().view(torch.uint8).view(G * hp, pb).view(words.dtype))
            head.index_copy_(0, idx[:, i, hp], conv.contiguous().view(torch.uint8)
                             .view(G, -1).view(words.dtype))
        return
    S = torch.stack([s for s, _ in states], 1).contiguous()  # [G, L, H, K, V]
    heads = S.view(torch.uint8).view(G, L, -1)  # [G, L, H hb]
    if heads.shape[2] != hp * per * hb:
        heads = F.pad(heads, (0, hp * per * hb - heads.shape[2]))
    heads = heads.view(G, L, hp, per * hb)
    if per * hb != pb:
        heads = F.pad(heads, (0, pb - per * hb))
    words.index_copy_(0, idx[:, :, :hp].reshape(-1), heads.reshape(-1, pb).view(words.dtype))
    conv = torch.stack([c for _, c in states], 1).contiguous()  # [G, L, W - 1, 3C]
    blob = conv.view(torch.uint8).view(G * L, -1)  # [G L, conv bytes]
    if cp == 1 and head is not None:  # only the tail's own words: the rest is never read
        head.index_copy_(0, idx[:, :, hp:].reshape(-1), blob.view(words.dtype))
    else:  # the tail is not whole words on one page: pad it to whole pages
        blob = F.pad(blob, (0, cp * pb - geo.kda_conv_bytes))
        words.index_copy_(0, idx[:, :, hp:].reshape(-1), blob.view(-1, pb).view(words.dtype))


def read_latents(seqs: Sequence[PagedSequence], mla: int, tokens: Sequence[int]
                 ) -> list[torch.Tensor]:
    """Each sequence's first tokens[i] latents of MLA layer `mla` [tokens[i], R], one gather."""
    s0 = seqs[0]
    counts = [-(-t // s0.P) for t in tokens]
    pages = [p for seq, n in zip(seqs, counts, strict=True) for p in seq.mla_tables[mla][:n]]
    if not pages:
        return [torch.zeros(0, s0.dims.kv_latent) for _ in seqs]
    blocks = _float_pages(s0)[torch.tensor(pages)]  # [sum n, P, R]
    out, at = [], 0
    for n, t in zip(counts, tokens, strict=True):
        out.append(blocks[at : at + n].view(n * s0.P, -1)[:t])
        at += n
    return out


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
