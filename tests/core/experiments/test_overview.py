"""One request's path: every stage's counts agree with each other and with the engine's oracle.

Pinned: the generated text is plain greedy decoding's (speculative or not); a warm request
reuses exactly its checkpoint boundary's blocks and computes the rest, a cold one reuses nothing
and publishes every full block; each phase's picks are the tokens routed times top-k per layer
(decode: one per byte plain, one per window position speculative); loads never exceed
fetches; the fleet routes by the first block's hash through the consistent-hash ring, so any
prompt with the same first block lands on the same cluster; bad knobs name the parameter.
"""

from __future__ import annotations

import pytest

from core.errors import ParamError
from core.experiments.overview import VNODES, fleet_route, serve_path
from core.fleet.ring import ConsistentHashRing
from core.prefix.entries import HIT, MISS
from core.prefix.hashing import block_hashes
from core.serve.live import PAGE
from core.serve.prompts import prompt

pytestmark = pytest.mark.usefixtures("one_thread")
N_NEW = 8


def test_warm_speculative_request(shipped):
    d = shipped.dims
    p = serve_path(shipped, "code", 3, 16, True, 8, n_new=N_NEW)
    assert p.text == shipped.generate(p.prompt, N_NEW)
    assert p.reason == HIT and p.matched_blocks == p.full_blocks == len(p.prompt) // PAGE
    assert p.reused_tokens == p.boundary_blocks * PAGE > 0
    assert p.reused_tokens + p.computed_tokens == len(p.prompt)
    assert p.kda_chunks == -(-p.computed_tokens // 64)
    picks = [[sum(layer) for layer in phase] for phase in p.picks]
    assert picks[0] == [p.computed_tokens * d.top_k] * d.n_layers
    assert picks[1] == [(p.drafted + p.passes) * d.top_k] * d.n_layers  # every window position
    for fetched, loads in zip(p.fetched, p.loads, strict=True):
        assert all(0 <= x <= f for x, f in zip(loads, fetched, strict=True))
    assert 0 <= p.draft_loads <= p.load_total("decode")
    assert p.accepted <= p.drafted and p.passes >= 1


def test_cold_plain_request(shipped):
    d = shipped.dims
    p = serve_path(shipped, "prose", 0, d.n_layers * d.n_experts, False, 4, n_new=N_NEW)
    assert p.text == shipped.generate(p.prompt, N_NEW)
    assert p.reason == MISS and p.reused_tokens == 0 and p.computed_tokens == len(p.prompt)
    assert p.published_blocks == p.full_blocks
    assert p.passes == N_NEW - 1 and p.drafted == p.moved_bytes == 0  # the prefill emits one
    assert [sum(layer) for layer in p.picks[1]] == [(N_NEW - 1) * d.top_k] * d.n_layers
    # every expert fits: nothing is loaded twice, so decode loads only what prefill did not
    assert p.load_total("prefill") + p.load_total("decode") <= d.n_layers * d.n_experts


def test_fleet_routes_by_the_first_block():
    text = prompt("records")
    key = block_hashes(text, PAGE)[0]
    ring = ConsistentHashRing(range(8), VNODES)
    assert fleet_route(key, 8) == ring.route(key)
    assert fleet_route(block_hashes(text + b"another question", PAGE)[0], 8) == ring.route(key)


@pytest.mark.parametrize(("kw", "name"), [
    ({"kind": "poetry"}, "kind"), ({"draft_len": 9}, "draft_len"), ({"capacity": 2}, "capacity"),
    ({"warm": "yes"}, "warm"), ({"clusters": 0}, "clusters"), ({"n_new": 1}, "n_new"),
])
def test_bad_knobs_name_the_parameter(shipped, kw, name):
    args = {"kind": "code", "draft_len": 2, "capacity": 16, "warm": False, "clusters": 4,
            "n_new": 4} | kw
    with pytest.raises(ParamError, match=name):
        serve_path(shipped, **args)
