"""Experts streamed through the ExpertCache give the same bits as experts held in memory, at
every capacity from top_k + 1 up, and the cache's counters are exactly the routing's demand
(a provider that fetched an expert twice, skipped one, or reused a stale slot fails here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from core.experts import invariant_errors
from core.model.providers import CacheProvider, open_cache
from core.model.trace import from_routing, prefill_demand, request_trace
from core.model.weights import load_model
from tests.core.model.conftest import TINY

CAPACITIES = [TINY.top_k + 1, 5, 8, TINY.n_layers * TINY.n_experts]
PROMPT = torch.tensor([list(b"17 * 3 = 51\n{\"id\": 4}")])  # [1, T]


@pytest.fixture(scope="module")
def resident(tiny_dir: Path):
    return load_model(tiny_dir)


def _assert_demand(cache, demand: np.ndarray) -> None:
    s = cache.stats()
    assert np.array_equal(cache.trace(), demand)
    assert s.demand_requests == len(demand)
    hist = np.zeros((TINY.n_layers, TINY.n_experts), np.int64)
    np.add.at(hist, (demand[:, 0], demand[:, 1]), 1)
    assert np.array_equal(cache.hist(), hist)
    assert invariant_errors(s) == []


@pytest.mark.parametrize("capacity", CAPACITIES)
def test_prefill_bit_exact(resident, tiny_dir: Path, capacity: int) -> None:
    """Prefill logits through the cache equal all-resident logits bit for bit."""
    with torch.no_grad():
        want = resident(PROMPT)
        with open_cache(tiny_dir, TINY, capacity) as cache:
            assert cache.n_slots == capacity
            got = resident(PROMPT, provider=CacheProvider(cache))
            _assert_demand(cache, prefill_demand(want.routing))
    assert torch.equal(got.logits, want.logits)
    for a, b in zip(got.routing, want.routing, strict=True):
        assert torch.equal(a.ids, b.ids) and torch.equal(a.weights, b.weights)


@pytest.mark.parametrize("capacity", CAPACITIES)
def test_decode_bit_exact(resident, tiny_dir: Path, capacity: int) -> None:
    """Token-by-token decode through the cache equals all-resident decode bit for bit, and the
    cache's requests are the routing trace's (layer, expert) requests in order."""
    with torch.no_grad(), open_cache(tiny_dir, TINY, capacity) as cache:
        provider = CacheProvider(cache)
        s_res, s_cache = resident.new_state(1), resident.new_state(1)
        routing = []
        for t in range(PROMPT.shape[1]):
            a = resident.step(PROMPT[:, t], s_res)
            b = resident.step(PROMPT[:, t], s_cache, provider)
            assert torch.equal(a.logits, b.logits), f"token {t}"
            routing.append(a.routing)
        trace = from_routing(routing, PROMPT[0].numpy())
        _assert_demand(cache, request_trace(trace))


def test_generate_through_cache(resident, tiny_dir: Path) -> None:
    """Greedy generation is identical with a cache of top_k + 1 slots."""
    with open_cache(tiny_dir, TINY, TINY.top_k + 1) as cache:
        got = resident.generate(b"abc", 12, CacheProvider(cache))
    assert got == resident.generate(b"abc", 12)
