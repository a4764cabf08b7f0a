"""ServeSession (the Serve tab's engine) against HybridLM.generate, per knob; isolation; stop.

Oracle: with routing off the generated text equals HybridLM.generate (all experts resident)
for a covering set of knob values (each value of each knob at least once); with routing on and
no drafts it equals HybridLM.generate through a RoutePolicy over a fresh cache of the same
capacity (the same residency history)."""

from __future__ import annotations

import pytest
import torch

from core.errors import ParamError
from core.model.providers import CacheProvider, open_cache
from core.model.weights import ASSET_DIR
from core.routing.policy import RoutePolicy
from core.serve.live import ROUTE, ServeConfig, ServeSession

PROMPT = b"def parse(argv):\n    for name in argv:\n        print(name)\n    return 0\n\n\ndef "
N_NEW = 16

# (draft_len, capacity, prefix_cache): every value of every knob at least once.
COVER = [(0, 3, True), (1, 32, False), (4, 128, True), (8, 17, False)]


@pytest.fixture(scope="module")
def greedy(shipped) -> bytes:
    return shipped.generate(PROMPT, N_NEW)


@pytest.mark.parametrize(("draft_len", "capacity", "prefix_cache"), COVER)
def test_text_equals_greedy_for_every_knob(shipped, greedy, draft_len, capacity, prefix_cache):
    session = ServeSession(shipped)
    cfg = ServeConfig(PROMPT, n_new=N_NEW, draft_len=draft_len, capacity=capacity,
                      prefix_cache=prefix_cache, every=4)
    try:
        for _ in range(2):  # the second run reuses the session's warm state
            snaps = list(session.run(cfg))
            assert snaps[-1].done and snaps[-1].text == greedy
            assert not any(s.done for s in snaps[:-1]) and len(snaps) >= 3  # it streamed
            assert all(greedy.startswith(s.text) for s in snaps)
            session.engine.check()
    finally:
        session.close()


def test_routing_on_equals_a_routed_decode(shipped):
    session = ServeSession(shipped)
    try:
        *_, last = session.run(ServeConfig(PROMPT, n_new=N_NEW, draft_len=0, capacity=24,
                                           routing=True))
    finally:
        session.close()
    with open_cache(ASSET_DIR, shipped.dims, 24) as cache:
        want = shipped.generate(PROMPT, N_NEW,
                                CacheProvider(cache, RoutePolicy(ROUTE, shipped.dims.n_layers)))
    assert last.text == want
    assert last.swaps > 0  # routing did change some choices at this capacity


def test_sessions_do_not_share_state(shipped):
    a, b = ServeSession(shipped), ServeSession(shipped)
    cfg = ServeConfig(PROMPT, n_new=8, draft_len=0, capacity=32)
    try:
        list(a.run(cfg))
        *_, again = a.run(cfg)
        *_, other = b.run(cfg)
        assert a.cache is not b.cache and a.engine.pool is not b.engine.pool
    finally:
        a.close()
        b.close()
    assert again.reused_tokens > 0  # the same session reuses its prefix cache
    assert other.reused_tokens == 0  # another session never sees it


def test_stop_midway_returns_the_request_pages(shipped):
    """Closing the stream (the Stop button) retires the request: afterwards every used page
    belongs to the prefix cache, and the session serves the next prompt normally."""
    session = ServeSession(shipped)
    try:
        stream = session.run(ServeConfig(PROMPT, n_new=64, draft_len=2, capacity=32, every=4))
        next(stream), next(stream)
        stream.close()
        eng = session.engine
        eng.check()
        assert eng.pool.num_used == sum(eng.cache.held_pages().values())
        *_, last = session.run(ServeConfig(PROMPT, n_new=8, capacity=32))
        assert last.done and last.reused_tokens > 0
    finally:
        session.close()


@pytest.mark.parametrize(("field", "kw"), [
    ("prompt length", {"prompt": b""}),
    ("prompt length", {"prompt": b"x" * 513}),
    ("n_new", {"n_new": 0}),
    ("draft_len", {"draft_len": 9}),
    ("capacity", {"capacity": 2}),
    ("routing", {"routing": 1}),
])
def test_bad_knobs_name_the_field(shipped, field, kw):
    cfg = ServeConfig(**{"prompt": PROMPT, **kw})
    with pytest.raises(ParamError, match=field):
        ServeSession(shipped).run(cfg)


def test_snapshots_hold_values_not_live_objects(shipped):
    session = ServeSession(shipped)
    try:
        *_, last = session.run(ServeConfig(PROMPT, n_new=8, draft_len=0, capacity=32))
    finally:
        session.close()
    assert isinstance(last.resident, tuple) and all(isinstance(r, tuple) for r in last.resident)
    fields = [getattr(last, f) for f in last.__slots__]
    assert not any(isinstance(v, torch.Tensor) for v in fields)
