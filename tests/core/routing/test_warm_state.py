"""A restored cache behaves exactly as the cache it was captured from.

Pinned (A/B hygiene, reference section 4): capture -> restore gives the same resident experts
in the same LRU order, and the same later decode through both gives the same counters, the
same events (ops, experts, origins) and the same final state.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.errors import ParamError
from core.model.providers import CacheProvider, open_cache
from core.routing.warm_state import capture, restore, warm_up
from tests.core.routing.conftest import TINY

CAPACITY = 7


@torch.no_grad()
def _decode(model, cache, text: bytes) -> None:
    state, prov = model.new_state(1), CacheProvider(cache)
    for b in text:
        model.step(torch.tensor([b]), state, prov)


def test_restore_behaves_like_the_original(tiny, tiny_dir: Path) -> None:
    with open_cache(tiny_dir, TINY, CAPACITY) as original:
        _decode(tiny, original, b"warm up text\n")
        state = capture(original)
        assert len(state) == CAPACITY
        original.reset_stats()
        seq = original.events()[-1].seq
        with restore(tiny_dir, tiny, CAPACITY, state) as copy:
            assert capture(copy) == state
            seq_copy = copy.events()[-1].seq
            _decode(tiny, original, b"then this\n")
            _decode(tiny, copy, b"then this\n")
            assert original.stats() == copy.stats()
            assert capture(original) == capture(copy)

            def ops(c, since):  # slot numbers may differ, and restored experts read as
                # demand-loaded (the module docstring), but never the decisions
                return [(e.op, e.layer, e.expert) for e in c.events(since) if e.op != "reserve"]

            assert ops(original, seq) == ops(copy, seq_copy)


def test_warm_up_is_deterministic(tiny, tiny_dir: Path) -> None:
    a = warm_up(tiny_dir, tiny, CAPACITY, b"abc def")
    assert a == warm_up(tiny_dir, tiny, CAPACITY, b"abc def") and len(a) == CAPACITY
    with pytest.raises(ParamError, match="more than capacity"):
        restore(tiny_dir, tiny, 3, a)
