"""Claims of the Overview lesson, computed by serving the tab's request with
core.experiments.overview at the tab's defaults (and with the draft length at 0, warm off)."""

from __future__ import annotations

import functools

from core.experiments.overview import VNODES, RequestPath, fleet_route, serve_path
from core.experiments.scenes import N_NEW
from core.model.weights import load_model
from core.prefix.entries import HIT, MISS
from core.prefix.hashing import block_hashes
from core.serve.live import PAGE
from tabs.overview import TAB
from tests.lessons.registry import claim

DEFAULTS = TAB.defaults()


@functools.cache
def _path(draft_len: int | None = None, warm: bool | None = None) -> RequestPath:
    d = DEFAULTS
    return serve_path(load_model(), d["kind"], d["draft_len"] if draft_len is None else draft_len,
                      d["capacity"], d["warm"] if warm is None else warm, d["clusters"],
                      n_new=N_NEW)


@claim("overview", "**Prompt.** {n} bytes of {kind} the model never trained on, one token per "
       "byte.")
def prompt_size() -> dict[str, object]:
    p = _path()
    return {"n": len(p.prompt), "kind": p.kind}


@claim("overview", "An earlier request sent the same first {shared} bytes, so the [[prefix cache]] "
       "returns {blocks} blocks of [[page]]s and each [[KDA]] layer's state after them.")
def prefix_hit() -> dict[str, object]:
    p = _path()
    assert DEFAULTS["warm"] and p.reason == HIT
    assert p.reused_tokens == p.boundary_blocks * p.block_tokens == p.full_blocks * PAGE
    return {"shared": p.full_blocks * PAGE, "blocks": p.boundary_blocks}


@claim("overview", "computes only the last {computed} tokens: {chunks} chunk per KDA layer")
def prefill() -> dict[str, object]:
    p = _path()
    assert p.computed_tokens == len(p.prompt) - p.reused_tokens
    assert p.kda_chunks == 1 and p.computed_tokens <= 64  # fewer tokens than one KDA chunk
    return {"computed": p.computed_tokens, "chunks": p.kda_chunks}


@claim("overview", "The [[expert cache]] holds {capacity} of the {experts}, so only {hit:.0%} of "
       "decoding's experts are resident.")
def expert_hits() -> dict[str, object]:
    p, d = _path(), load_model().dims
    assert p.capacity == DEFAULTS["capacity"]
    return {"capacity": p.capacity, "experts": d.n_layers * d.n_experts, "hit": p.hit_rate}


@claim("overview", "with [[gamma]] {g}: {passes} verify passes write the {after} bytes after the "
       "prefill's first.")
def speculative() -> dict[str, object]:
    p = _path()
    assert len(p.text) == N_NEW and p.text == load_model().generate(p.prompt, N_NEW)
    return {"g": p.draft_len, "passes": p.passes, "after": len(p.text) - 1}


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


@claim("overview", "{plain_passes} passes instead of {spec_passes}, yet {plain_loads} expert loads "
       "from disk instead of {spec_loads} ({plain_hit:.0%} resident instead of {spec_hit:.0%}). "
       "A verify pass routes its whole window at once: it asks for {per_pass:.1f} experts across "
       "the {layers} layers, so two passes need more than the {capacity} slots hold and each "
       "evicts what the next needs. Two plain steps ask for {two_steps:.0f}: they fit.")
def drafting_costs_loads() -> dict[str, object]:
    plain, spec = _path(0), _path()
    assert plain.text == spec.text
    per_pass = spec.fetched_total("decode") / spec.passes
    per_step = plain.fetched_total("decode") / plain.passes
    assert plain.load_total("decode") < spec.load_total("decode")
    assert plain.hit_rate > spec.hit_rate
    assert 2 * per_pass > spec.capacity >= 2 * per_step  # why: two passes' working set
    return {"plain_passes": plain.passes, "spec_passes": spec.passes,
            "plain_loads": plain.load_total("decode"), "spec_loads": spec.load_total("decode"),
            "plain_hit": plain.hit_rate, "spec_hit": spec.hit_rate, "per_pass": per_pass,
            "layers": len(spec.layer_kinds), "capacity": spec.capacity,
            "two_steps": 2 * per_step}


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


@claim("overview", "The ring places each cluster at {vnodes} points ([[vnodes]]). The key is the "
       "chained hash of the first {page}-byte block, so requests that share it meet on one "
       "cluster. Should cluster {primary} fail, the request goes to cluster {secondary}, the "
       "next cluster clockwise.")
def fleet_backup() -> dict[str, object]:
    p = _path()
    assert p.key == block_hashes(p.prompt, PAGE)[0] and p.secondary != p.primary
    return {"vnodes": VNODES, "page": PAGE, "primary": p.primary, "secondary": p.secondary}
