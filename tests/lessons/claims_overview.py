"""Claims of the Overview lesson, computed by serving the tab's request with
core.experiments.overview at the tab's defaults (and with the draft length at 0, warm off, other
cache sizes), and with drafts that are always right (core.experiments.overview_drafts)."""

from __future__ import annotations

from core.experiments.overview import VNODES, RequestPath, fleet_route, path
from core.experiments.overview_drafts import always_right
from core.experiments.scenes import N_NEW
from core.experiments.shipped import model as load_model
from core.prefix.entries import HIT, MISS
from core.prefix.hashing import block_hashes
from core.serve.live import PAGE
from tabs.overview import TAB
from tests.lessons.registry import Reason, Within, claim, reason

DEFAULTS = TAB.defaults()
ROOMY = (64, 96)  # cache sizes where one verify pass's experts fit (checked below)


def _path(draft_len: int | None = None, warm: bool | None = None,
          capacity: int | None = None) -> RequestPath:
    d = DEFAULTS
    return path(d["draft_len"] if draft_len is None else draft_len, d["kind"],
                d["capacity"] if capacity is None else capacity,
                d["warm"] if warm is None else warm, d["clusters"])


@claim("overview", "**Prompt.** {n} bytes of {kind} the model never trained on, one token per "
       "byte.")
def prompt_size() -> dict[str, object]:
    p = _path()
    return {"n": len(p.prompt), "kind": p.kind}


@reason("overview", "An earlier request sent the same first {shared} bytes, so the [[prefix "
        "cache]] returns {blocks} blocks of [[page]]s and each [[KDA]] layer's state after them.")
def prefix_hit() -> Reason:
    """Cause: the earlier request (warm). Without it nothing is reused; with it, the draft
    length (what happens after the prefill) leaves the reuse as it is."""
    p = _path()
    assert DEFAULTS["warm"] and p.reason == HIT
    assert p.reused_tokens == p.boundary_blocks * p.block_tokens == p.full_blocks * PAGE
    return Reason(
        fields={"shared": p.full_blocks * PAGE, "blocks": p.boundary_blocks},
        effect="blocks reused by the prefill", base=p.boundary_blocks,
        cause="the earlier request (warm -> cold)",
        changed=_path(warm=False).boundary_blocks, expect="down", at_least=p.boundary_blocks,
        rival="the draft length (4 -> 0)", rival_effects=(_path(0).boundary_blocks,),
        within=Within(name="exactly"))


@claim("overview", "computes only the last {computed} tokens: {chunks} chunk per KDA layer")
def prefill() -> dict[str, object]:
    p = _path()
    assert p.computed_tokens == len(p.prompt) - p.reused_tokens
    assert p.kda_chunks == 1 and p.computed_tokens <= 64  # fewer tokens than one KDA chunk
    return {"computed": p.computed_tokens, "chunks": p.kda_chunks}


@claim("overview", "The [[expert cache]] holds {capacity} of the {experts}; {hit:.0%} of the "
       "experts decoding asks for are there.")
def expert_hits() -> dict[str, object]:
    p, d = _path(), load_model().dims
    experts = d.n_layers * d.n_experts
    assert p.capacity == DEFAULTS["capacity"] and 4 * p.capacity == experts
    hit = 1 - p.load_total("decode") / p.fetched_total("decode")
    assert hit != p.capacity / experts  # a hit rate is not the share of experts held
    return {"capacity": p.capacity, "experts": experts, "hit": hit}


@claim("overview", "drafts up to [[gamma]] {g} bytes a pass ({drafted} in all); {passes} verify "
       "passes write the {after} bytes after the prefill's first.")
def speculative() -> dict[str, object]:
    p = _path()
    assert len(p.text) == N_NEW and p.text == load_model().generate(p.prompt, N_NEW)
    assert p.drafted < p.draft_len * p.passes and p.accepted < p.drafted  # gamma is a ceiling
    return {"g": p.draft_len, "drafted": p.drafted, "passes": p.passes, "after": len(p.text) - 1}


@claim("overview", "sends the request to cluster {primary} of {clusters}, where every request "
       "opening with that block goes.")
def fleet() -> dict[str, object]:
    p = _path()
    other = block_hashes(p.prompt[:PAGE] + b"a different question", PAGE)[0]
    assert fleet_route(other, p.clusters) == (p.primary, p.secondary)  # same opening, same place
    return {"primary": p.primary, "clusters": p.clusters}


@claim("overview", "set the draft length to {off}")
def draft_off() -> dict[str, object]:
    off = int(TAB.control("draft_len").minimum)
    assert _path(off).drafted == 0
    return {"off": off}


def _extra_loads(spec: RequestPath, plain: RequestPath) -> float:
    """Drafting's extra decode loads from disk, as a share of plain decoding's."""
    assert spec.text == plain.text  # drafting never changes the text
    return spec.load_total("decode") / plain.load_total("decode") - 1


@claim("overview", "Fewer: {plain_passes} passes instead of {spec_passes}, yet {plain_loads} "
       "loads instead of {spec_loads}:")
def drafting_loads() -> dict[str, object]:
    plain, spec = _path(0), _path()
    assert plain.passes == len(plain.text) - 1 == spec.passes + (plain.passes - spec.passes)
    assert plain.passes > spec.passes and plain.load_total("decode") < spec.load_total("decode")
    return {"plain_passes": plain.passes, "spec_passes": spec.passes,
            "plain_loads": plain.load_total("decode"), "spec_loads": spec.load_total("decode")}


def _right(capacity: int | None = None, warm: bool | None = None) -> float:
    """Always-right drafting's extra loads over plain decoding's, a share (same gamma)."""
    spec = _path(capacity=capacity, warm=warm)
    right = always_right(spec.draft_len, spec.kind, spec.capacity, spec.warm)
    assert right.drafted == right.accepted > 0 and right.text == spec.text
    return _extra_loads(right, _path(0, capacity=capacity, warm=warm))


def _ask_per_pass(p: RequestPath) -> float:
    """Experts one verify pass asks for, all layers together (hits and loads)."""
    return p.fetched_total("decode") / p.passes


@reason("overview", "drafting costs {cost:.0%} more. Rejected drafts load experts no kept byte "
        "needs: with always-right drafts the cost falls to {right:.0%}.")
def drafting_costs_loads() -> Reason:
    """Cause: rejected drafts (always-right drafts remove them, same gamma and cache). Rival:
    the earlier request (a cold start instead of the warm prefix): the cost stays within 5
    points."""
    cost = _extra_loads(_path(), _path(0))
    cold = _extra_loads(_path(warm=False), _path(0, warm=False))
    return Reason(
        fields={"cost": cost, "right": _right()},
        effect="drafting's extra expert loads, a share of plain decoding's", base=cost,
        cause="rejected drafts (drafts always right instead)", changed=_right(), expect="down",
        at_least=0.05, rival="the earlier request (a cold start)", rival_effects=[cold],
        within=Within(name="5 points", abs=0.05))


@reason("overview", "The rest is the window: an always-right pass asks for {ask:.0f} experts at "
        "once, more than the {cap} slots hold; with {c1} slots always-right drafts cost {r1:.0%}.")
def window_overflows() -> Reason:
    """Effect: always-right drafting's extra loads. Cause: the cache's size (32 -> 64, 96
    slots: room for a pass's asks and more). Rival: the earlier request (a cold start, 32
    slots): within 5 points."""
    spec, cap = _path(), DEFAULTS["capacity"]
    right = always_right(spec.draft_len, spec.kind, spec.capacity, spec.warm)
    ask = _ask_per_pass(right)
    assert ask > cap and all(c > ask for c in ROOMY)
    roomy = [_right(capacity=c) for c in ROOMY]
    return Reason(
        fields={"ask": ask, "cap": cap, "c1": ROOMY[0], "r1": roomy[0]},
        effect="always-right drafting's extra expert loads, a share of plain decoding's",
        base=_right(), cause="the cache's size (32 -> 64, 96 slots)",
        changed=roomy, expect="down", at_least=0.04,
        rival="the earlier request (a cold start)", rival_effects=[_right(warm=False)],
        within=Within(name="5 points", abs=0.05))


@claim("overview", "an earlier request made of the prompt's {blocks} full blocks is served first "
       "on the same engine and expert cache. Unticked, the engine starts empty: no block is "
       "found, all {n} tokens are computed, and the prefill publishes {pub_blocks} blocks and "
       "{groups} checkpoint groups for the next request.")
def cold() -> dict[str, object]:
    warm, cold_ = _path(), _path(warm=False)
    assert cold_.reason == MISS and cold_.reused_tokens == 0
    assert cold_.text == warm.text  # reuse never changes the text
    return {"blocks": warm.full_blocks, "n": cold_.computed_tokens,
            "pub_blocks": cold_.published_blocks, "groups": cold_.published_groups}


@claim("overview", "the request holds {kda} KDA state pages, a fixed {per} per KDA layer "
       "whatever the length, and {mla} MLA pages of {page} tokens each.")
def pages() -> dict[str, object]:
    p = _path()
    n_kda = p.layer_kinds.count("kda")
    n_mla = len(p.layer_kinds) - n_kda
    assert p.prefill_pages.request_kda % n_kda == 0
    assert p.prefill_pages.request_mla == n_mla * -(-(len(p.prompt) + N_NEW) // PAGE)
    assert _path(warm=False).prefill_pages.request_kda == p.prefill_pages.request_kda
    return {"kda": p.prefill_pages.request_kda, "per": p.prefill_pages.request_kda // n_kda,
            "mla": p.prefill_pages.request_mla, "page": PAGE}


@claim("overview", "The ring places each cluster at {vnodes} points ([[vnodes]]).")
def fleet_vnodes() -> dict[str, object]:
    return {"vnodes": VNODES}


def _variants(prompt: bytes, at: int, n: int = 64) -> list[bytes]:
    """n copies of prompt, each with byte `at` replaced by a different value."""
    return [prompt[:at] + bytes([(prompt[at] + 1 + i) % 256]) + prompt[at + 1:]
            for i in range(n)]


def _together(p: RequestPath, prompts: list[bytes]) -> float:
    """Share of the prompts routed to the request's own cluster."""
    return sum(fleet_route(block_hashes(q, PAGE)[0], p.clusters)[0] == p.primary
               for q in prompts) / len(prompts)


@reason("overview", "The key is the chained hash of the first {page}-byte block, so requests "
        "that share it meet on one cluster. Should cluster {primary} fail, the request goes to "
        "cluster {secondary}, the next cluster clockwise.")
def fleet_backup() -> Reason:
    """Cause: sharing the first block. Change one byte inside it (64 ways): the requests spread
    over the fleet; change one byte after it instead: all still meet."""
    p = _path()
    assert p.key == block_hashes(p.prompt, PAGE)[0] and p.secondary != p.primary
    return Reason(
        fields={"page": PAGE, "primary": p.primary, "secondary": p.secondary},
        effect="share of requests routed to the request's cluster", base=_together(p, [p.prompt]),
        cause="the first block (one byte of it changed)",
        changed=_together(p, _variants(p.prompt, PAGE // 2)), expect="down", at_least=0.5,
        rival="the bytes after the first block (one changed)",
        rival_effects=(_together(p, _variants(p.prompt, PAGE + 8)),),
        within=Within(name="exactly"))
