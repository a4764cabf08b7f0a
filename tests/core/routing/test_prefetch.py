"""Next-layer prefetch changes placement, never the output; its meters are what they claim.

Pinned: decoding through a RoutedProvider with each predictor gives the same logits, bit for
bit, as decoding through a plain CacheProvider and as all-resident decoding; the oracle
predictor has recall and precision 1 under stock routing; each load's fate per layer (used
or wasted), read from the cache's events, adds up to the cache's own counters; the
previous-token predictor's recall equals the overlap of consecutive steps' recorded experts;
PILOT's prediction is layer L+1's router on the post-attention state rebuilt here from the
block's own input and its mixer's output; the taps are removed on close.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.experts import invariant_errors
from core.model.providers import CacheProvider, open_cache
from core.routing import PREDICTORS, Prefetcher, RouteConfig, RoutedProvider, RoutePolicy
from core.routing.prefetch import total
from tests.core.routing.conftest import TINY

TEXT = b"17 * 3 = 51\n{\"id\": 4, \"city\": \"lima\"}\n"
CAPACITY = 6


@torch.no_grad()
def _decode(model, provider=None) -> list[torch.Tensor]:
    state = model.new_state(1)
    return [model.step(torch.tensor([b]), state, provider).logits for b in TEXT]


@pytest.fixture(scope="module")
def plain(tiny, tiny_dir: Path):
    """All-resident logits, and the cache run's logits and recorded experts (no prefetch)."""
    with open_cache(tiny_dir, TINY, CAPACITY) as cache:
        prov = RoutedProvider(cache)
        cached = _decode(tiny, prov)
    return _decode(tiny), cached, prov.steps


@pytest.mark.parametrize("predictor", PREDICTORS)
@pytest.mark.parametrize("policy", [None, "topk"])
def test_prefetch_is_bit_identical(tiny, tiny_dir: Path, plain, predictor: str, policy) -> None:
    resident, cached, steps = plain
    with open_cache(tiny_dir, TINY, CAPACITY) as cache:
        pol = RoutePolicy(RouteConfig("topk", k=2), TINY.n_layers) if policy else None
        with Prefetcher(predictor, cache, tiny, future=steps) as pre:
            prov = RoutedProvider(cache, pol, pre)
            got = _decode(tiny, prov)
        s = cache.stats()
        m = total(pre.meters())
    for a, b, c in zip(resident, cached, got, strict=True):
        assert torch.equal(a, b) and torch.equal(a, c)
    assert prov.steps == steps  # the same experts, step by step
    assert invariant_errors(s) == []
    assert m.predictions == (TINY.n_layers - 1) * len(TEXT) - (TINY.n_layers - 1) * (
        predictor == "previous")  # "previous" has nothing to offer at the first token
    assert m.loaded <= m.issued <= m.predicted and 0.0 <= m.recall <= 1.0
    assert s.prefetch_reads == m.loaded and s.hits_prefetched > 0
    # per-layer outcomes from the cache's events add up to its own counters
    assert (m.useful, m.wasted) == (s.hits_prefetched, s.prefetch_wasted)


def test_oracle_is_perfect_under_stock_routing(tiny, tiny_dir: Path, plain) -> None:
    _, _, steps = plain
    with open_cache(tiny_dir, TINY, CAPACITY) as cache, \
            Prefetcher("oracle", cache, tiny, future=steps) as pre:
        _decode(tiny, RoutedProvider(cache, None, pre))
    m = total(pre.meters())
    assert m.recall == 1.0 and m.precision == 1.0
    assert all(p.predictions == 0 for p in pre.meters()[:1])  # layer 0 is never predicted


def test_previous_token_recall_by_hand(tiny, tiny_dir: Path, plain) -> None:
    """recall = sum over steps t >= 1 and layers L >= 1 of |used(t-1, L) & used(t, L)| over
    sum |used(t, L)|, straight from the recorded experts."""
    _, _, steps = plain
    hit = sum(len(set(steps[t - 1][L]) & set(steps[t][L]))
              for t in range(1, len(steps)) for L in range(1, TINY.n_layers))
    used = sum(len(set(steps[t][L])) for t in range(1, len(steps)) for L in range(1, TINY.n_layers))
    with open_cache(tiny_dir, TINY, CAPACITY) as cache, \
            Prefetcher("previous", cache, tiny) as pre:
        _decode(tiny, RoutedProvider(cache, None, pre))
    assert total(pre.meters()).recall == pytest.approx(hit / used)


@torch.no_grad()
def test_pilot_is_the_next_router_on_the_post_attention_state(tiny, tiny_dir: Path) -> None:
    """The state is rebuilt here as the block's input plus its mixer's output."""
    post = {}

    def block_in(i):
        return lambda _m, args: post.__setitem__(("in", i), args[0])

    def mixer_step(i, forward_groups):
        def wrapped(h, groups, states, kx):
            out = forward_groups(h, groups, states, kx)
            post[("mix", i)] = out[0].unsqueeze(0)  # [1, N, D], as the block adds it
            return out
        return wrapped

    mp = pytest.MonkeyPatch()
    hooks = [b.register_forward_pre_hook(block_in(i)) for i, b in enumerate(tiny.blocks)]
    for i, b in enumerate(tiny.blocks):
        mp.setattr(b.mixer, "forward_groups", mixer_step(i, b.mixer.forward_groups))
    try:
        with open_cache(tiny_dir, TINY, CAPACITY) as cache, \
                Prefetcher("pilot", cache, tiny, width=3) as pre:
            _decode(tiny, RoutedProvider(cache, None, pre))
            for L in range(TINY.n_layers - 1):
                x = post[("in", L)] + post[("mix", L)]  # [1, 1, D] after L's attention
                nxt = tiny.blocks[L + 1]
                h = nxt.norm2.forward(x[:, -1])  # [1, D] (.forward: not through the taps)
                scores = nxt.moe.router(h).softmax(-1)[0]  # [E]
                want = sorted(range(TINY.n_experts), key=lambda e: (-float(scores[e]), e))[:3]
                assert list(pre.predict(len(TEXT) - 1, L + 1)) == want
    finally:
        mp.undo()
        for h in hooks:
            h.remove()
    assert all(not b.norm2._forward_pre_hooks for b in tiny.blocks)  # closed: taps removed


def test_oracle_needs_a_future(tiny, tiny_dir: Path) -> None:
    from core.errors import ParamError

    with open_cache(tiny_dir, TINY, CAPACITY) as cache:
        with pytest.raises(ParamError, match="oracle"):
            Prefetcher("oracle", cache, tiny)
        with pytest.raises(ParamError, match="predictor must be one of"):
            Prefetcher("lookahead", cache, tiny)


def test_cache_provider_batches_are_demand(tiny, tiny_dir: Path) -> None:
    """Without a prefetcher nothing is ever a prefetched hit (demand batches are demand)."""
    with open_cache(tiny_dir, TINY, CAPACITY) as cache:
        _decode(tiny, CacheProvider(cache))
        s = cache.stats()
    assert (s.hits_prefetched, s.prefetch_reads) == (0, 0)
    assert s.demand_batch_reads > 0 and s.demand_misses == s.demand_batch_misses
