"""Replay from a warm cache: LRU equals the live cache, Belady bounds it, both worked by hand.

Pinned: groups of k requests, one per layer call, with the live cache's order (members already
resident are protected, the others loaded, then got in order); a hand-worked case where a
group's own member must not be evicted and Belady keeps the expert used next; the LRU replay of
a real stock pass from a warm state equals its live hits; Belady is never below LRU; bad input
raises ParamError naming it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ParamError
from core.routing import RouteConfig, teacher_forced
from core.routing.ceiling import replay_hits
from core.routing.record import run_pass
from core.routing.warm_state import warm_up
from tests.core.routing.conftest import TINY


def test_hand_worked_groups() -> None:
    # capacity 3, k = 2, the cache holding a (oldest), b, c (newest); every key in layer 0.
    a, b, c, d, e = ((0, x) for x in range(5))
    reqs = [a, d, c, e, a, d]  # three layer calls: (a, d), (c, e), (a, d)
    # LRU:    (a, d): a hits and is stamped; d evicts b (the oldest non-member): c a d
    #         (c, e): c hits; e evicts a: d c e
    #         (a, d): d hits; a evicts c                                  -> 3 hits
    assert replay_hits([a, b, c], reqs, 3, 2, "lru") == 3
    # Belady: (a, d): a hits; d evicts b (never used again): a c d
    #         (c, e): c hits; a and d are both next used by call 3, a tie: the lower key,
    #                 a, is evicted: c d e
    #         (a, d): d hits; a misses                                    -> 3 hits
    assert replay_hits([a, b, c], reqs, 3, 2, "belady") == 3
    # A group's own member is never the victim: with capacity 2, (a, d) after [a, b] must
    # evict b, never a, although a is older.
    assert replay_hits([a, b], [a, d, a, d], 2, 2, "lru") == 3


def test_belady_keeps_what_is_used_next() -> None:
    a, b, c = ((1, x) for x in range(3))
    # capacity 2, k = 1, a cold start: a b c a b c
    # LRU evicts exactly what comes next (the cliff): 0 hits. Belady: c evicts b (next used
    # after a), so a hits; then b evicts a (never used again), so c hits: 2 hits.
    assert replay_hits([], [a, b, c, a, b, c], 2, 1, "lru") == 0
    assert replay_hits([], [a, b, c, a, b, c], 2, 1, "belady") == 2


def test_bad_input_names_it() -> None:
    k = [(0, 0), (0, 1)]
    with pytest.raises(ParamError, match="policy"):
        replay_hits([], k, 4, 2, "lfu")
    with pytest.raises(ParamError, match="capacity"):
        replay_hits([], k, 1, 2)
    with pytest.raises(ParamError, match="groups of k"):
        replay_hits([], k[:1], 4, 2)
    with pytest.raises(ParamError, match="distinct experts of one layer"):
        replay_hits([], [(0, 0), (1, 1)], 4, 2)
    with pytest.raises(ParamError, match="state holds"):
        replay_hits(k + [(0, 2)], k, 2, 2)


@pytest.mark.parametrize("capacity", [4, 9])
def test_lru_replay_equals_the_live_cache(tiny, tiny_dir: Path, one_thread,
                                          capacity: int) -> None:
    text = b"x = 17 * 3\nprint(x)\n"
    start = warm_up(tiny_dir, tiny, capacity, b"def f(a):\n")
    run = run_pass(tiny, tiny_dir, capacity, start, text,
                   RouteConfig("topk", k=TINY.top_k), teacher_forced(tiny, text))
    rec = run.record
    assert len(run.requests) == rec.requests == (len(text) - 1) * TINY.n_layers * TINY.top_k
    lru = replay_hits(start, run.requests, capacity, TINY.top_k, "lru")
    assert lru == rec.hit_resident + rec.hit_prefetched
    assert replay_hits(start, run.requests, capacity, TINY.top_k, "belady") >= lru
