"""Claims of the Serve lesson, computed by running the engine's ServeSession at the preset."""

from __future__ import annotations

import functools

from core.model.weights import load_model
from core.serve.live import PAGE, ServeConfig, ServeSession, ServeSnapshot
from tabs.serve import PRESET_PROMPT, TAB
from tests.lessons.registry import claim

DEFAULTS = TAB.defaults()


@functools.cache
def _runs(draft_len: int, times: int = 1, routing: bool = False) -> tuple[ServeSnapshot, ...]:
    """The last snapshot of each of `times` runs of the preset in one fresh session."""
    session = ServeSession(load_model())
    cfg = ServeConfig(prompt=PRESET_PROMPT.encode(), n_new=DEFAULTS["n_new"],
                      draft_len=draft_len, capacity=DEFAULTS["capacity"],
                      prefix_cache=True, routing=routing)
    out = []
    try:
        for _ in range(times):
            *_, last = session.run(cfg)
            out.append(last)
    finally:
        session.close()
    return tuple(out)


def _hit(s: ServeSnapshot) -> float:
    return sum(s.hits) / (sum(s.hits) + sum(s.misses))


@claim("serve", "whole pages of {page} tokens that an earlier request computed come back. The "
       "preset reuses nothing the first time; press Generate "
       "again and {reused} of its {prompt_tokens} tokens are reused.")
def prefix_reuse() -> dict[str, object]:
    first, second = _runs(DEFAULTS["draft_len"], 2)
    assert first.reused_tokens == 0
    assert second.reused_tokens % PAGE == 0 and second.reused_tokens < second.prompt_tokens
    return {"page": PAGE, "reused": second.reused_tokens, "prompt_tokens": first.prompt_tokens}


@claim("serve", "The [[expert cache]] holds {capacity} of the model's {experts}.")
def capacity() -> dict[str, object]:
    d = load_model().dims
    return {"capacity": DEFAULTS["capacity"], "experts": d.n_layers * d.n_experts}


def _per_pass(s: ServeSnapshot) -> float:
    """Distinct experts one layer fetched per decode pass (a token when plain)."""
    passes = len(s.steps) or len(s.text)
    return (sum(s.hits) + sum(s.misses)) / passes / len(s.hits)


@claim("serve", "It hurts. Plain decoding loads {plain:.1f} experts from disk per byte it "
       "writes; drafting up to {gamma} bytes loads {spec:.1f}.")
def drafting_costs_loads() -> dict[str, object]:
    gamma = DEFAULTS["draft_len"]
    plain, spec = _runs(0)[0], _runs(gamma)[0]
    assert plain.text == spec.text  # drafting never changes the text
    per_byte = [sum(x.misses) / len(x.text) for x in (plain, spec)]
    assert per_byte[0] < per_byte[1]
    return {"plain": per_byte[0], "gamma": gamma, "spec": per_byte[1]}


@claim("serve", "Per byte it asks for about as many experts, {spec_ask:.1f} against "
       "{plain_ask:.1f}, yet finds fewer of them resident: {spec:.0%} hit, against {plain:.0%} "
       "plain.")
def drafting_finds_fewer() -> dict[str, object]:
    """The extra loads are misses, not asks: asks per byte within 15% of plain's, hit rate
    lower (counted from the session's per-layer hits and misses)."""
    gamma = DEFAULTS["draft_len"]
    plain, spec = _runs(0)[0], _runs(gamma)[0]
    ask = [(sum(x.hits) + sum(x.misses)) / len(x.text) for x in (plain, spec)]
    assert abs(ask[1] / ask[0] - 1) < 0.15
    assert _hit(spec) < _hit(plain)
    return {"spec_ask": ask[1], "plain_ask": ask[0], "spec": _hit(spec), "plain": _hit(plain)}


@claim("serve", "set the draft length to {off} and press Generate")
def draft_off() -> dict[str, object]:
    off = int(TAB.control("draft_len").minimum)
    assert _runs(off)[0].steps == ()  # no verify pass: plain greedy decoding
    return {"off": off}


@claim("serve", "on the preset, {diff} of its {n} bytes differ from plain greedy decoding's, from "
       "byte {first} on.")
def routing_changes_text() -> dict[str, object]:
    plain, routed = _runs(0)[0], _runs(0, routing=True)[0]
    assert plain.text == load_model().generate(PRESET_PROMPT.encode(), DEFAULTS["n_new"])
    diff = [i for i, (a, b) in enumerate(zip(routed.text, plain.text, strict=True)) if a != b]
    assert diff and routed.swaps > 0
    return {"diff": len(diff), "n": len(plain.text), "first": diff[0]}
