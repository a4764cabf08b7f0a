"""Claims of assets/lessons/paging.md, computed on a real PagePool and the K3 ledger.

Toy numbers come from the tab's own cached engine runs at its defaults (core.experiments.paging:
a PagedSequence grown token by token, the model's real KDA state packed and unpacked); K3
numbers from core.paging.ledger. Each is re-derived by hand from the dimensions (whole heads
per page, ceilings for pages, the byte crossover as the first length whose latents outweigh
the state), so a change to either side fails.
"""

from __future__ import annotations

import functools

import torch

from core.dims import K3
from core.experiments.paging import growth, roundtrip, stored
from core.experiments.scenes import MAX_TOKENS
from core.model.manifest import shipped_dims as dims
from core.paging.ledger import k3_geometry, toy_geometry
from core.paging.pack import HeadLayout
from core.paging.walkthrough import pages_crossover_tokens
from core.tolerances import max_abs
from tabs.paging import TAB
from tabs.units import GIB, KIB, MIB
from tests.lessons.registry import claim

LESSON = "paging"


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@functools.cache
def defaults() -> dict[str, object]:
    return TAB.defaults()


def k3():
    return k3_geometry(tokens_per_page=int(defaults()["k3_tokens_per_page"]))


def k3_pages_by_hand(P: int) -> tuple[int, int, int]:
    """(heads per page, pages for S, pages for the conv tail) of one K3 KDA layer."""
    page = P * (K3.kv_latent + K3.qk_rope) * 2  # bf16 latent + rope key per token
    head = K3.kda_head_dim**2 * 4  # fp32 S, one head
    per = page // head
    conv = (K3.conv_size - 1) * 3 * K3.kda_heads * K3.kda_head_dim * 2
    return per, ceil_div(K3.kda_heads, per), ceil_div(conv, page)


@claim(LESSON, "with {P}-token pages, one KDA layer's {mib:.0f} MiB state needs {pages} pages, "
               "and a sequence's latents outweigh its whole KDA state only beyond {x:,} tokens")
def k3_summary() -> dict[str, object]:
    g = k3()
    per, s_pages, c_pages = k3_pages_by_hand(g.tokens_per_page)
    assert (g.heads.per_page, g.heads.pages, g.kda_pages_per_layer) == (per, s_pages,
                                                                       s_pages + c_pages)
    x = g.crossover_tokens
    assert g.mla_bytes(x - 1) < g.kda_bytes <= g.mla_bytes(x)
    return {"P": g.tokens_per_page, "mib": g.kda_state_bytes / MIB, "pages": s_pages + c_pages,
            "x": x}


@functools.cache
def round_trips():
    d = defaults()
    return {dt: roundtrip(int(d["seq_len"]), int(d["tokens_per_page"]), dt)
            for dt in ("float32", "bfloat16")}


@claim(LESSON, "the difference is exactly {d:g}, in float32 and in bfloat16")
def pack_exact() -> dict[str, object]:
    rts = round_trips()
    assert all(rt.no_split_head for rt in rts.values())
    pairs = [(a, b) for rt in rts.values() for a, b in zip(rt.packed, rt.unpacked, strict=True)]
    assert all(torch.equal(a.view(torch.uint8), b.view(torch.uint8)) for a, b in pairs)
    return {"d": max(max_abs(a, b) for a, b in pairs)}


# ---- instructor notes ------------------------------------------------------------------------

@claim(LESSON, "At the defaults ({L} tokens, P = {P}) the toy holds {total} pages: {kpl} per KDA "
               "layer ({s} for the {H} heads of S, {c} for the conv tail) and {mpl} per MLA "
               "layer. Token {nxt} opens a new page in both MLA layers")
def growth_defaults() -> dict[str, object]:
    d = dims()
    L, P = int(defaults()["seq_len"]), int(defaults()["tokens_per_page"])
    s, g = stored(L, P), growth(P)
    total = g.mla_pages[L] + g.kda_pages[L]
    assert total == s.pool_pages - s.free_pages and d.n_mla == 2
    geo = toy_geometry(d, P)
    per_layer = {layer: len(s.layer_cells(layer)) for layer in range(d.n_layers)}
    kpl = {per_layer[i] for i, k in enumerate(d.layer_kinds) if k == "kda"}
    mpl = {per_layer[i] for i, k in enumerate(d.layer_kinds) if k == "mla"}
    assert len(kpl) == len(mpl) == 1
    mpl_n = mpl.pop()
    assert mpl_n == ceil_div(L, P)
    nxt = mpl_n * P + 1
    assert g.mla_pages[nxt] == g.mla_pages[nxt - 1] + d.n_mla
    s_pages = ceil_div(d.kda_heads, geo.page_bytes // (d.kda_head_dim**2 * 4))
    return {"L": L, "P": P, "total": total, "kpl": kpl.pop(), "s": s_pages, "H": d.kda_heads,
            "c": ceil_div(d.kda_conv_bytes, geo.page_bytes), "mpl": mpl_n, "nxt": nxt}


@claim(LESSON, "MLA pages outnumber the {k} KDA pages from {t} tokens on, later than the byte "
               "crossover at {b} tokens, because a page is allocated whole. The pool's count "
               "equals the ledger at every length from {lo} to {hi}")
def growth_crossover() -> dict[str, object]:
    P = int(defaults()["tokens_per_page"])
    g, geo = growth(P), toy_geometry(dims(), P)
    t = g.mla_overtakes_kda
    assert t is not None and g.mla_pages[t - 1] <= g.kda_pages[t - 1] < g.mla_pages[t]
    assert t == pages_crossover_tokens(geo) > geo.crossover_tokens
    assert len(set(g.kda_pages)) == 1
    assert all(g.mla_pages[n] + g.kda_pages[n] == geo.pages(n) for n in range(MAX_TOKENS + 1))
    return {"k": g.kda_pages[0], "t": t, "b": geo.crossover_tokens, "lo": 0, "hi": MAX_TOKENS}


@claim(LESSON, "With P = {P} a page is {page:g} KiB and a float32 head {head:g} KiB: {per} heads "
               "per page, nothing unused. In bfloat16 a head is {bhead:g} KiB, so all {H} heads "
               "fit in one page")
def pack_layout() -> dict[str, object]:
    d, P = dims(), int(defaults()["tokens_per_page"])
    f32, bf16 = round_trips()["float32"].layout, round_trips()["bfloat16"].layout
    page = P * d.kv_latent * 4
    assert f32 == HeadLayout(d.kda_heads, d.kda_head_dim**2 * 4, page) and f32.wasted_bytes == 0
    assert bf16.head_bytes == d.kda_head_dim**2 * 2 and bf16.pages == 1
    return {"P": P, "page": page / KIB, "head": f32.head_bytes / KIB, "per": f32.per_page,
            "bhead": bf16.head_bytes / KIB, "H": d.kda_heads}


@claim(LESSON, "it is checked live over all {n} KDA layers")
def pack_layers() -> dict[str, object]:
    n = {rt.layers for rt in round_trips().values()}
    assert n == {dims().n_kda}
    return {"n": n.pop()}


@claim(LESSON, "A page of {P} tokens × {tb:,} B is {page:.0f} KiB; a head of S is {head:.0f} KiB, "
               "so {per} heads fit, and {H} heads need {hp} pages, plus {cp} for the {conv:.0f} "
               "KiB conv tail. {nk} KDA layers take {kp} pages ({gib:.2f} GiB) at any length. In "
               "whole pages the crossover moves to {pc:,} tokens; at {mil} tokens the latents "
               "take {m:.1f} GiB")
def k3_ledger() -> dict[str, object]:
    g = k3()
    per, hp, cp = k3_pages_by_hand(g.tokens_per_page)
    assert g.kda_pages == K3.n_kda * (hp + cp)
    pc = pages_crossover_tokens(g)
    assert g.mla_pages(pc - 1) <= g.kda_pages < g.mla_pages(pc)
    mil = 1_000_000
    return {"P": g.tokens_per_page, "tb": g.mla_token_bytes, "page": g.page_bytes / KIB,
            "head": g.kda_head_bytes / KIB, "per": per, "H": K3.kda_heads, "hp": hp, "cp": cp,
            "conv": g.kda_conv_bytes / KIB, "nk": K3.n_kda, "kp": g.kda_pages,
            "gib": g.kda_bytes / GIB, "pc": pc, "mil": f"{mil // 1_000_000}M",
            "m": g.mla_bytes(mil) / GIB}
