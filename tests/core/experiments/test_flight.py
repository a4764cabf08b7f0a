"""SingleFlight against its contract: one computation per missing key however many threads ask,
different keys at once, LRU bounds by count and bytes, errors never cached, reentrancy caught.
The oracle is a plain dict replay of the same requests (what an unbounded cache would hold)."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.experiments.flight import SingleFlight, single_flight


def test_concurrent_callers_of_one_key_share_one_computation():
    calls = []
    gate = threading.Event()
    cache: SingleFlight[str, int] = SingleFlight(max_items=8)

    def compute() -> int:
        calls.append(1)
        gate.wait(5)
        return 42

    got: list[int] = []
    threads = [threading.Thread(target=lambda: got.append(cache.get("k", compute)))
               for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.2)  # every thread has asked by now; the first still computes
    gate.set()
    for t in threads:
        t.join(5)
    assert got == [42] * 8 and len(calls) == 1
    s = cache.stats()
    assert (s.misses, s.joins + s.hits) == (1, 7)


def test_different_keys_compute_at_the_same_time():
    both = threading.Barrier(2, timeout=5)  # each computation waits for the other to start
    cache: SingleFlight[str, str] = SingleFlight()

    def compute(k: str) -> str:
        both.wait()
        return k

    out: dict[str, str] = {}
    ts = [threading.Thread(target=lambda k=k: out.update({k: cache.get(k, lambda: compute(k))}))
          for k in "ab"]
    for t in ts:
        t.start()
    for t in ts:
        t.join(6)
    assert out == {"a": "a", "b": "b"}  # a serialising lock would break the barrier


def test_an_error_reaches_every_waiter_and_is_not_cached():
    cache: SingleFlight[str, int] = SingleFlight()
    gate = threading.Event()

    def boom() -> int:
        gate.wait(5)
        raise ValueError("no")

    errors: list[BaseException] = []

    def ask() -> None:
        try:
            cache.get("k", boom)
        except ValueError as e:
            errors.append(e)

    ts = [threading.Thread(target=ask) for _ in range(3)]
    for t in ts:
        t.start()
    time.sleep(0.1)
    gate.set()
    for t in ts:
        t.join(5)
    assert len(errors) == 3 and "k" not in cache
    assert cache.get("k", lambda: 7) == 7  # the next caller computes afresh


def test_reentrancy_raises_instead_of_deadlocking():
    cache: SingleFlight[str, int] = SingleFlight()
    with pytest.raises(RuntimeError, match="again"):
        cache.get("k", lambda: cache.get("k", lambda: 1))


@settings(max_examples=200, deadline=None)
@given(ops=st.lists(st.tuples(st.integers(0, 9), st.integers(1, 40)), max_size=60),
       max_items=st.one_of(st.none(), st.integers(1, 6)),
       max_bytes=st.one_of(st.none(), st.integers(0, 100)))
def test_lru_bounds_match_a_replay(ops, max_items, max_bytes):
    """Against an independent replay: an ordered list of (key, size), most recent last."""
    cache: SingleFlight[int, int] = SingleFlight(max_items=max_items, max_bytes=max_bytes,
                                                 size=lambda v: v)
    model: list[tuple[int, int]] = []
    sizes = {}
    for key, size in ops:
        sizes.setdefault(key, size)  # a key's value never changes (a pure function)
        v = sizes[key]
        assert cache.get(key, lambda v=v: v) == v
        hit = [kv for kv in model if kv[0] == key]
        model = [kv for kv in model if kv[0] != key]
        if hit or max_bytes is None or v <= max_bytes:
            model.append((key, v))
        while model and ((max_items is not None and len(model) > max_items)
                         or (max_bytes is not None and sum(s for _, s in model) > max_bytes)):
            model.pop(0)
        assert {k for k, _ in model} == {k for k in range(10) if k in cache}
        assert cache.stats().bytes == sum(s for _, s in model)
        assert cache.stats().items == len(model)


def test_decorator_caches_by_arguments_and_reports_ready():
    calls = []

    @single_flight(max_items=2)
    def square(x: int) -> int:
        calls.append(x)
        return x * x

    assert not square.ready(3)
    assert [square(3), square(3), square(4)] == [9, 9, 16] and calls == [3, 4]
    assert square.ready(3)
    square(5)  # evicts 3, the least recently used
    assert not square.ready(3) and square.ready(4)
    info = square.cache_info()
    assert (info.hits, info.misses, info.items) == (1, 3, 2)
    square.cache_clear()
    assert not square.ready(4) and square.cache_info().items == 0
    with pytest.raises(TypeError, match="positional"):
        square(x=2)
