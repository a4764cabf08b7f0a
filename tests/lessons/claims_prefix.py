"""Claims of assets/lessons/prefix.md, computed on the tab's own engine runs.

Every preset is served by a real Engine (core.experiments.prefix: the cached prompt, then the
request, safe and with check_groups=False, against a cold HybridLM.forward); reuse is checked
against the reuse rule (core.prefix.rule.usable_blocks) and page counts against the dimensions.
"""

from __future__ import annotations

import functools

from core.dims import K3, k3_group_blocks
from core.experiments.prefix import BROKEN_LAYER, base, deepest_group, fork, runs
from core.experiments.prefix_partial import partial_curve
from core.experiments.prefix_sharing import sharing
from core.experiments.prefix_spacing import sweep
from core.experiments.scenes import CACHED, REQUEST
from core.model.manifest import shipped_dims as dims
from core.paging.pool import PageKind
from core.prefix.rule import usable_blocks
from core.tolerances import FP32_DECODE_MAX_ABS
from tabs.prefix import TAB
from tests.lessons.registry import Reason, Within, claim, reason

LESSON = "prefix"


def k_default() -> int:
    return int(TAB.defaults()["checkpoint_every"])


def k_demo() -> int:
    return int(TAB.control("checkpoint_every").demo)


def shared_blocks(P: int) -> int:
    """Full blocks REQUEST shares with CACHED, counted byte by byte."""
    n = next(i for i, (a, b) in enumerate(zip(REQUEST, CACHED, strict=False)) if a != b)
    return n // P


@claim(LESSON, "every full block of {P} tokens")
def block_size() -> dict[str, object]:
    eng = base(k_default())
    assert eng.cache.P == eng.P == eng.pool.page_bytes // dims().mla_bytes_per_token
    return {"P": eng.P}


@claim(LESSON, "all {n} KDA layers at one block boundary")
def group_layers() -> dict[str, object]:
    groups = list(base(k_default()).cache.groups.values())
    assert groups and all(len(g.layers) == dims().n_kda for g in groups)
    assert all(pages is not None for g in groups for pages in g.layers)  # every layer written
    return {"n": dims().n_kda}


@claim(LESSON, "Groups are what cost memory: one is {g} pages, a block of latents only {b}")
def group_cost() -> dict[str, object]:
    r, pt = runs(k_default())["hit"], sweep().point(1)
    d = dims()
    per_group = pt.group_pages // pt.groups
    assert per_group * pt.groups == pt.group_pages
    geo_pages = d.n_kda * 3  # 2 pages of S (4 heads, 2 per page) + 1 conv page per KDA layer
    assert per_group == geo_pages
    per_block = pt.block_pages // (len(CACHED) // r.block_tokens)
    assert per_block == d.n_mla
    return {"g": per_group, "b": per_block}


@claim(LESSON, "the hit preset matches {m} blocks; how many can it reuse with a group every {k} "
               "blocks?")
def predict() -> dict[str, object]:
    r = runs(k_default())["hit"]
    assert r.lookup.stage1_blocks == shared_blocks(r.block_tokens)
    return {"m": r.lookup.stage1_blocks, "k": k_demo()}


@claim(LESSON, "{b} blocks, {t} tokens: the deepest boundary that holds a group, a multiple of "
               "{k}")
def predict_answer() -> dict[str, object]:
    r, k = runs(k_demo())["hit"], k_demo()
    b = r.lookup.boundary_blocks
    assert b % k == 0 and b <= r.lookup.stage1_blocks < b + k  # the deepest multiple of k
    assert r.reused_tokens == b * r.block_tokens
    return {"b": b, "t": r.reused_tokens, "k": k}


@reason(LESSON, "Trusting it anyway moves the logits by only {d:.4f}, because {n} tokens are "
               "recomputed after the boundary; one token past it, by {d1:.1f}, and the next byte "
               "changes.")
def partial_unsafe() -> Reason:
    """Cause: the tokens recomputed after the partial group's boundary (the preset's 106 -> 1).
    Rival: which KDA layer the group lacks (each of the others, at the preset's distance): the
    error stays under the margin that would change the next byte."""
    r = runs(k_default())["partial"]
    assert r.max_abs_safe <= FP32_DECODE_MAX_ABS < r.max_abs_unsafe
    assert r.unsafe_reused_tokens > r.reused_tokens
    n = r.request_tokens - r.unsafe_reused_tokens

    curve = partial_curve(BROKEN_LAYER, (1, n))
    assert curve.boundary == r.unsafe_reused_tokens and curve.max_abs[1] == r.max_abs_unsafe
    assert curve.next_byte[0] != curve.cold_next_byte[0]  # one token past: the text changes
    assert curve.next_byte[1] == curve.cold_next_byte[1]
    others = [partial_curve(layer, (n,)).max_abs[0] for layer in range(dims().n_kda)
              if layer != BROKEN_LAYER]
    margin = curve.margin[1]
    return Reason(
        fields={"d": r.max_abs_unsafe, "n": n, "d1": curve.max_abs[0]},
        effect="max |logits - cold run's| of the trusted partial group", base=r.max_abs_unsafe,
        cause=f"tokens recomputed after the boundary ({n} -> 1)", changed=curve.max_abs[0],
        expect="up", at_least=curve.margin[0],
        rival="the KDA layer the group lacks (each other layer)", rival_effects=others,
        within=Within(name=f"the next byte's margin there ({margin:.2f})", abs=margin))


# ---- instructor notes ------------------------------------------------------------------------

@claim(LESSON, "stage 1 matches {m} blocks, stage 2 resumes at block {b}, {r} of the request's "
               "{n} tokens are reused and {c} computed. With a group every {k} blocks it resumes "
               "at block {b3} ({r3} tokens)")
def hit_defaults() -> dict[str, object]:
    r, r3 = runs(k_default())["hit"], runs(k_demo())["hit"]
    P = r.block_tokens
    for x, k in ((r, k_default()), (r3, k_demo())):
        assert x.lookup.boundary_blocks == usable_blocks(x.lookup.stage1_blocks,
                                                         x.request_tokens, P, k)
        assert x.reused_tokens == x.lookup.boundary_blocks * P
        assert x.reused_tokens + x.computed_tokens == x.request_tokens
    return {"m": r.lookup.stage1_blocks, "b": r.lookup.boundary_blocks, "r": r.reused_tokens,
            "n": r.request_tokens, "c": r.computed_tokens, "k": k_demo(),
            "b3": r3.lookup.boundary_blocks, "r3": r3.reused_tokens}


def _eviction_order() -> list[tuple[int, int]]:
    """(last use, depth) of each entry the fallback preset evicts, in order (on a fork)."""
    eng = fork(base(k_default()))
    target, cache, out = deepest_group(eng, REQUEST), eng.cache, []
    while target in cache.groups:
        before = {**{("b", d): e for d, e in cache.blocks.items()},
                  **{("g", d): e for d, e in cache.groups.items()}}
        assert cache.make_room(cache.pool.num_free + 1)
        gone = [e for key, e in before.items()
                if key[1] not in (cache.blocks if key[0] == "b" else cache.groups)]
        out += [(e.last_used, e.depth) for e in gone]
    return out


@claim(LESSON, "*miss* computes all {n} tokens. *fallback* evicts {e} cache entries, deepest "
               "first (one request last used them all: a tie, broken by depth), before the group "
               "it needed is gone, and resumes at block {fb}. *partial* resumes at block {pb} "
               "too; trusting the partial group it reuses {ur} tokens and its last logits differ "
               "from a cold run by {d:.4f}, while every safe lookup gives the cold run's logits "
               "bit for bit")
def other_presets() -> dict[str, object]:
    rs = runs(k_default())
    order = _eviction_order()
    assert len({t for t, _ in order}) == 1  # a tie on last use
    depths = [d for _, d in order]
    assert depths == sorted(depths, reverse=True) and depths[0] > depths[-1]  # deepest first
    miss, fb, pa = rs["miss"], rs["fallback"], rs["partial"]
    assert miss.reused_tokens == 0 and miss.computed_tokens == miss.request_tokens
    assert fb.lookup.boundary_blocks < rs["hit"].lookup.boundary_blocks
    assert fb.group_pages < rs["hit"].group_pages  # eviction freed whole groups
    assert pa.lookup.boundary_blocks == fb.lookup.boundary_blocks
    assert pa.unsafe.boundary_blocks == rs["hit"].lookup.boundary_blocks
    assert all(r.max_abs_safe == 0.0 for r in rs.values())  # recomputed from the logits
    return {"n": miss.computed_tokens, "e": fb.evicted_entries, "fb": fb.lookup.boundary_blocks,
            "pb": pa.lookup.boundary_blocks, "ur": pa.unsafe_reused_tokens,
            "d": pa.max_abs_unsafe}


@claim(LESSON, "One token past it the next byte's two likeliest values were {m1:.2f} apart, less "
               "than the error.")
def partial_margin() -> dict[str, object]:
    r = runs(k_default())["partial"]
    n = r.request_tokens - r.unsafe_reused_tokens
    c = partial_curve(BROKEN_LAYER, (1, n))
    assert c.margin[0] < c.max_abs[0]
    return {"m1": c.margin[0]}


@claim(LESSON, "Reuse comes in steps of {P} × k tokens. Over {probes} probes the mean reusable "
               "prefix falls from {m1:.1f} tokens at k = {k1} to {m3:.1f} at k = {k3}, while the "
               "groups' pages fall from {g1} to {g3}. At k = {k1} groups hold {share:.0%} of the "
               "cache's pages")
def spacing() -> dict[str, object]:
    sw = sweep()
    p1, p3 = sw.point(1), sw.point(k_demo())
    for p in sw.points:
        want = [usable_blocks(m // sw.block_tokens, s + 1, sw.block_tokens,
                              p.checkpoint_every) * sw.block_tokens
                for m, s in zip(p.matched, sw.shared, strict=True)]  # probe: s shared + 1 byte
        assert list(p.reusable) == want
    assert p1.mean_reusable > p3.mean_reusable and p1.group_pages > p3.group_pages
    held = base(1).cache.held_pages()
    assert held[PageKind.KDA_STATE] == p1.group_pages and held[PageKind.MLA_KV] == p1.block_pages
    return {"P": sw.block_tokens, "probes": len(sw.shared), "m1": p1.mean_reusable, "k1": 1,
            "m3": p3.mean_reusable, "k3": k_demo(), "g1": p1.group_pages, "g3": p3.group_pages,
            "share": p1.group_pages / (p1.group_pages + p1.block_pages)}


@claim(LESSON, "weighs as many bytes as {x:.1f} blocks of {P} tokens of latents; here "
               "{toy_b:.1f} blocks' bytes, and {toy:.0f} blocks' pages once each rounds up to "
               "whole pages: with K3's weights k = {k} would free {k3_saved:.0%} of this cache's "
               "memory, against {saved:.0%} here.")
def k3_group() -> dict[str, object]:
    P = 512
    x = k3_group_blocks(P)
    group = K3.n_kda * (K3.kda_state_bytes + K3.kda_conv_bytes)
    assert x == group / (K3.n_mla * K3.mla_bytes_per_token * P)
    sw, k = sweep(), k_demo()
    p1, p3 = sw.point(1), sw.point(k)
    d = dims()
    toy = (p1.group_pages / p1.groups) / d.n_mla  # a group, in blocks of latents' pages
    P_toy = base(k_default()).P
    toy_b = d.n_kda * (d.kda_recurrent_bytes + d.kda_conv_bytes) / (
        d.n_mla * d.mla_bytes_per_token * P_toy)  # the same, in bytes
    assert toy_b < toy  # pages round the group's conv tail up
    blocks = p1.block_pages / dims().n_mla
    assert p3.block_pages == p1.block_pages  # spacing keeps every block

    def saved(weight: float) -> float:  # memory k frees, groups weighing `weight` blocks
        return 1 - (p3.groups * weight + blocks) / (p1.groups * weight + blocks)
    assert x > toy and saved(x) > saved(toy)
    return {"x": x, "P": P, "toy_b": toy_b, "toy": toy, "k": k, "k3_saved": saved(x),
            "saved": saved(toy)}


# ---- Going further: why states are copied and latents shared ----------------------------------
@functools.cache
def _sharing(n_new: int = 32):
    return sharing(k_default(), n_new)


@claim(LESSON, "the request's {blocks} reused blocks are {shared} pages the cache holds too, none "
               "copied. Its KDA layers start from a copy: {copied} pages of its own")
def shared_and_copied() -> dict[str, object]:
    s, d = _sharing(), dims()
    assert s.shared_pages == s.reused_blocks * d.n_mla  # one page a block and MLA layer
    assert s.copied_pages == s.group_pages
    return {"blocks": s.reused_blocks, "shared": s.shared_pages, "copied": s.copied_pages}


@claim(LESSON, "after {n} more bytes, {changed} of the {total:,} bytes the request read from the "
               "cache differ")
def latents_unchanged() -> dict[str, object]:
    s = _sharing()
    return {"n": s.decoded, "changed": s.cached_changed, "total": s.cached_bytes}


@claim(LESSON, "one step changes {frac:.0%} of its values")
def state_rewritten() -> dict[str, object]:
    return {"frac": _sharing().step_changed}


@reason(LESSON, "So the state is copied: run in place, those {n} bytes would have changed "
               "{changed:,} bytes of the checkpoint")
def state_copied() -> Reason:
    """Effect: bytes of the cached prefix (shared latents and the group) the request changes.
    Cause: its KDA state run in the group's pages instead of a copy. Rival: how long it
    decodes (3, 8 bytes; the copy held): nothing cached changes."""
    s = _sharing()
    return Reason(
        fields={"n": s.decoded, "changed": s.in_place_changed},
        effect="bytes of the cached prefix changed by the request", base=s.cached_changed,
        cause="the KDA state run in the checkpoint's pages instead of a copy",
        changed=s.in_place_changed, expect="up", at_least=1,
        rival="bytes decoded (3, 8)", rival_effects=[_sharing(n).cached_changed for n in (3, 8)],
        within=Within(name="no byte", abs=0))
