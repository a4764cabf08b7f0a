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
from core.paging.ledger import PagedGeometry, k3_geometry, toy_geometry
from core.paging.pack import HeadLayout, blob_pages
from core.paging.walkthrough import pages_crossover_tokens
from core.tolerances import max_abs
from tabs.paging import TAB
from tabs.units import GIB, KIB, MIB
from tests.lessons.registry import Reason, Within, claim, reason

LESSON = "paging"


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@functools.cache
def defaults() -> dict[str, object]:
    return TAB.defaults()


def k3(tokens_per_page: int | None = None) -> PagedGeometry:
    return k3_geometry(tokens_per_page=tokens_per_page or int(defaults()["k3_tokens_per_page"]))


def toy(tokens_per_page: int | None = None) -> PagedGeometry:
    return toy_geometry(dims(), tokens_per_page or int(defaults()["tokens_per_page"]))


def first_length(wins) -> int:
    """The shortest sequence length (tokens) at which wins(length) holds."""
    n = 1
    while not wins(n):
        n += 1
    return n


@reason(LESSON, "Its [[MLA]] layers store one small latent vector per token, so they grow with "
               "the sequence.")
def mla_grows() -> Reason:
    """Cause: the tokens (the default length doubled): the latents' bytes grow by one vector per
    token per MLA layer. Rival: the page size (P doubled at the same length): bytes unchanged."""
    g, L = toy(), int(defaults()["seq_len"])
    per_token = g.n_mla * g.mla_token_bytes
    return Reason(effect="bytes of MLA latents", base=g.mla_bytes(L),
                  cause=f"the sequence length ({L} -> {2 * L} tokens)", changed=g.mla_bytes(2 * L),
                  expect="up", at_least=L * per_token,
                  rival=f"the page size (P {g.tokens_per_page} -> {2 * g.tokens_per_page})",
                  rival_effects=(toy(2 * g.tokens_per_page).mla_bytes(L),),
                  within=Within(name="exactly"))


@reason(LESSON, "a head never spans two pages, so some bytes may stay empty.")
def whole_heads_leave_gaps() -> Reason:
    """At K3 with 384-token pages (the tab's slider reaches it) 6 heads fit a page and 48 KiB
    stay empty in each. Cause: whole heads (let heads span pages: S needs its bytes' pages
    only). Rival: the sequence length (S is the same at any length)."""
    g = k3(384)
    lay, S = g.heads, g.kda_state_bytes

    def empty(pages: int) -> int:
        return pages * g.page_bytes - S
    split = blob_pages(S, g.page_bytes)
    assert lay.page_bytes % lay.head_bytes and lay.pages > split
    return Reason(effect="bytes left empty in one K3 layer's S pages (384-token pages)",
                  base=empty(lay.pages), cause="whole heads (a head may span two pages)",
                  changed=empty(split), expect="down", at_least=g.page_bytes,
                  rival="the sequence length", rival_effects=(empty(lay.pages),),
                  within=Within(name="exactly"))


def k3_pages_by_hand(P: int) -> tuple[int, int, int]:
    """(heads per page, pages for S, pages for the conv tail) of one K3 KDA layer."""
    page = P * (K3.kv_latent + K3.qk_rope) * 2  # bf16 latent + rope key per token
    head = K3.kda_head_dim**2 * 4  # fp32 S, one head
    per = page // head
    conv = (K3.conv_size - 1) * 3 * K3.kda_heads * K3.kda_head_dim * 2
    return per, ceil_div(K3.kda_heads, per), ceil_div(conv, page)


@claim(LESSON, "with {P}-token pages, one KDA layer's {mib:.0f} MiB state needs {s_pages} pages "
               "and its conv tail a {nth}; a sequence's latents outweigh its whole KDA state only "
               "beyond {x:,} tokens")
def k3_summary() -> dict[str, object]:
    g = k3()
    per, s_pages, c_pages = k3_pages_by_hand(g.tokens_per_page)
    assert (g.heads.per_page, g.heads.pages, g.kda_pages_per_layer) == (per, s_pages,
                                                                       s_pages + c_pages)
    assert c_pages == 1
    x = g.crossover_tokens
    assert g.mla_bytes(x - 1) < g.kda_bytes <= g.mla_bytes(x)
    return {"P": g.tokens_per_page, "mib": g.kda_state_bytes / MIB, "s_pages": s_pages,
            "nth": f"{s_pages + c_pages}th", "x": x}


@functools.cache
def round_trips():
    d = defaults()
    return {dt: roundtrip(int(d["seq_len"]), int(d["tokens_per_page"]), dt)
            for dt in ("float32", "bfloat16")}


@reason(LESSON, "a difference of exactly {d:g}, in float32 and in bfloat16, because the pages "
               "store the bytes, not the numbers.")
def pack_exact() -> Reason:
    """Cause: storing bytes (store the float32 state as bfloat16 numbers instead: it moves).
    Rival: the dtype and the page size (each round trip, bytes stored): exactly 0."""
    rts = round_trips()
    for rt in rts.values():  # no head spans two pages, read from the layout's own slots
        assert all(off + rt.layout.head_bytes <= rt.layout.page_bytes for _, off in rt.slots)
    pairs = [(a, b) for rt in rts.values() for a, b in zip(rt.packed, rt.unpacked, strict=True)]
    assert all(torch.equal(a.view(torch.uint8), b.view(torch.uint8)) for a, b in pairs)
    d = max(max_abs(a, b) for a, b in pairs)
    f32 = rts["float32"].packed
    as_numbers = max(max_abs(x, x.to(torch.bfloat16).to(torch.float32)) for x in f32)
    other_p = roundtrip(int(defaults()["seq_len"]), 2 * int(defaults()["tokens_per_page"]),
                        "float32")
    rival = [max_abs(a, b) for a, b in zip(other_p.packed, other_p.unpacked, strict=True)]
    return Reason(fields={"d": d}, effect="max |unpacked - packed| over every KDA layer",
                  base=d, cause="storing bytes (float32 state stored as bfloat16 numbers)",
                  changed=as_numbers, expect="up",
                  rival="the dtype (float32, bfloat16) and the page size (P doubled)",
                  rival_effects=(*[max_abs(a, b) for a, b in pairs], *rival),
                  within=Within(name="exactly"))


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


@claim(LESSON, "MLA pages outnumber the {k} KDA pages from {t} tokens on; rounding MLA's pages "
               "up alone would move that earlier, not later. The pool's count equals the ledger "
               "at every length from {lo} to {hi}")
def growth_crossover() -> dict[str, object]:
    P = int(defaults()["tokens_per_page"])
    g, geo = growth(P), toy_geometry(dims(), P)
    kda_bytes_mla_pages = first_length(lambda n: geo.mla_pages(n) * geo.page_bytes
                                       > geo.kda_bytes)
    assert kda_bytes_mla_pages < geo.crossover_tokens  # MLA's rounding alone: earlier
    t = g.mla_overtakes_kda
    assert t is not None and g.mla_pages[t - 1] <= g.kda_pages[t - 1] < g.mla_pages[t]
    assert t == pages_crossover_tokens(geo)
    assert len(set(g.kda_pages)) == 1
    assert all(g.mla_pages[n] + g.kda_pages[n] == geo.pages(n) for n in range(MAX_TOKENS + 1))
    return {"k": g.kda_pages[0], "t": t, "lo": 0, "hi": MAX_TOKENS}


@reason(LESSON, "At {t} tokens, though the latents' bytes pass the state's at {b}. The delay is "
               "KDA's, because each layer's {conv:.1f} KiB conv tail takes a whole {page:.0f} "
               "KiB page: counted in bytes, the tails would let blue win at {tails}.")
def crossover_delay() -> Reason:
    """Effect: the length where MLA's pages first exceed KDA's (the dot). Cause: the conv tails'
    whole pages (count them at their bytes, S still in whole heads): earlier. Rival: MLA's page
    rounding (count the latents at their bytes instead): the same length."""
    g = toy()
    B = g.page_bytes
    t = pages_crossover_tokens(g)
    s_bytes = g.n_kda * g.heads.pages * B  # S in its whole-head pages
    tails = first_length(lambda n: g.mla_pages(n) * B > s_bytes + g.n_kda * g.kda_conv_bytes)
    mla_in_bytes = first_length(lambda n: g.mla_bytes(n) > g.kda_pages * B)
    b = g.crossover_tokens
    assert tails < b < t
    return Reason(
        fields={"t": t, "b": b, "conv": g.kda_conv_bytes / KIB, "page": B / KIB, "tails": tails},
        effect="tokens until MLA's pages outnumber KDA's", base=t,
        cause="each conv tail's whole page (tails counted at their bytes)", changed=tails,
        expect="down", at_least=t - b, rival="MLA's page rounding (latents counted at their "
        "bytes)", rival_effects=(mla_in_bytes,), within=Within(name="exactly"))


@claim(LESSON, "With P = {P} a page is {page:g} KiB and a float32 head {head:g} KiB: {per} heads "
               "per page, nothing unused.")
def pack_layout() -> dict[str, object]:
    d, P = dims(), int(defaults()["tokens_per_page"])
    f32 = round_trips()["float32"].layout
    page = P * d.kv_latent * 4
    assert f32 == HeadLayout(d.kda_heads, d.kda_head_dim**2 * 4, page) and f32.wasted_bytes == 0
    return {"P": P, "page": page / KIB, "head": f32.head_bytes / KIB, "per": f32.per_page}


@reason(LESSON, "In bfloat16 a head is {bhead:g} KiB, so all {H} heads fit in one page.")
def bf16_fits_one_page() -> Reason:
    """Cause: the head's size (bfloat16 -> float32 doubles it: two pages). Rival: the sequence
    length (the state does not grow): one page."""
    d = dims()
    bf16 = round_trips()["bfloat16"].layout
    assert bf16.head_bytes == d.kda_head_dim**2 * 2
    f32 = HeadLayout(bf16.H, 2 * bf16.head_bytes, bf16.page_bytes)
    longer = roundtrip(MAX_TOKENS, int(defaults()["tokens_per_page"]), "bfloat16").layout
    return Reason(fields={"bhead": bf16.head_bytes / KIB, "H": d.kda_heads},
                  effect="pages one layer's S takes", base=bf16.pages,
                  cause="the head's size (bfloat16 -> float32)", changed=f32.pages, expect="up",
                  rival=f"the sequence length ({defaults()['seq_len']} -> {MAX_TOKENS})",
                  rival_effects=(longer.pages,), within=Within(name="exactly"))


@claim(LESSON, "is checked live over all {n} KDA layers")
def pack_layers() -> dict[str, object]:
    n = {rt.layers for rt in round_trips().values()}
    assert n == {dims().n_kda}
    return {"n": n.pop()}


@claim(LESSON, "A page of {P} tokens × {tb:,} B is {page:.0f} KiB; a head of S is {head:.0f} KiB: "
               "{per} heads fit, and {H} heads need {hp} pages, plus {cp} for the {conv:.0f} KiB "
               "conv tail. {nk} KDA layers take {kp} pages at any length: {pgib:.2f} GiB of pages "
               "holding {gib:.2f} GiB of state. In whole pages the crossover moves to {pc:,} "
               "tokens; at {mil} tokens the latents take {m:.1f} GiB")
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
            "pgib": g.kda_pages * g.page_bytes / GIB, "gib": g.kda_bytes / GIB, "pc": pc,
            "mil": f"{mil // 1_000_000}M",
            "m": g.mla_bytes(mil) / GIB}
