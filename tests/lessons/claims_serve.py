"""Claims of the Serve lesson, computed by running the engine's ServeSession at the preset."""

from __future__ import annotations

import functools

from core.model.weights import load_model
from core.serve.live import PAGE, ServeConfig, ServeSession, ServeSnapshot
from tabs.serve import PRESET_PROMPT, TAB
from tests.lessons.registry import claim

DEFAULTS = TAB.defaults()


@functools.cache
def _runs(draft_len: int, times: int = 1) -> tuple[ServeSnapshot, ...]:
    """The last snapshot of each of `times` runs of the preset in one fresh session."""
    session = ServeSession(load_model())
    cfg = ServeConfig(prompt=PRESET_PROMPT.encode(), n_new=DEFAULTS["n_new"],
                      draft_len=draft_len, capacity=DEFAULTS["capacity"],
                      prefix_cache=True, routing=False)
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


@claim("serve", "whole pages of {page} tokens that an earlier request computed come back "
       "instead of being recomputed. The preset reuses nothing the first time; press Generate "
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


@claim("serve", "Plain decoding finds {plain:.0%} of the experts it needs already resident; "
       "drafting up to {gamma} bytes finds {spec:.0%}. A verify pass routes up to {window} "
       "positions at once, so each layer needs {distinct:.1f} different experts per pass "
       "instead of {per_token:.0f} per token: {need:.0f} across the {layers} layers against "
       "{token_set:.0f}. The {capacity} slots hold about one pass's experts, so most are gone "
       "before the next pass needs them.")
def drafting_hurts_the_cache() -> dict[str, object]:
    gamma = DEFAULTS["draft_len"]
    plain, spec = _runs(0)[0], _runs(gamma)[0]
    layers = len(spec.hits)
    distinct = (sum(spec.hits) + sum(spec.misses)) / len(spec.steps) / layers
    per_token = (sum(plain.hits) + sum(plain.misses)) / len(plain.text) / layers
    need, token_set, cap = distinct * layers, per_token * layers, DEFAULTS["capacity"]
    assert _hit(spec) < _hit(plain)
    # why: LRU keeps reuse only while the working set between two uses fits in the slots; a
    # token's set fits twice over, a pass's fills the cache on its own.
    assert token_set <= cap / 2 and need >= 0.9 * cap and need > 1.5 * token_set
    assert plain.text == spec.text  # drafting never changes the text
    return {"plain": _hit(plain), "gamma": gamma, "spec": _hit(spec), "window": gamma + 1,
            "distinct": distinct, "per_token": per_token, "need": need, "layers": layers,
            "token_set": token_set, "capacity": cap}


@claim("serve", "set the draft length to {off} and press Generate")
def draft_off() -> dict[str, object]:
    off = int(TAB.control("draft_len").minimum)
    assert _runs(off)[0].steps == ()  # no verify pass: plain greedy decoding
    return {"off": off}
