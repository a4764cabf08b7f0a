"""SingleFlight: a bounded LRU cache where one computation serves every concurrent caller.

  get(key, compute)   the cached value; on a miss, compute() runs once: a caller asking for the
                      same key meanwhile waits for that computation and gets its value (or its
                      exception), never a second computation. Different keys compute at once.
  peek(key)           the cached value or None (no computation, no wait)
  clear()             forget every value (computations in flight still finish and are kept)
  stats()             hits, misses, joins (callers that waited on another's computation),
                      evictions, items and bytes held

Bounds: at most `max_items` values, and at most `max_bytes` by `size(value)`; the least recently
used go first. A value bigger than max_bytes is returned but not kept. A computation that raises
caches nothing. A computation that asks for its own key (reentrancy) raises RuntimeError instead
of deadlocking.

Why not functools.lru_cache behind a lock: lru_cache lets two threads compute one missing key
twice, and one lock around it serialises every key (a cheap lookup waits behind an expensive
computation of another key). `single_flight(max_items)` is the decorator form for functions of
hashable arguments, with `ready(*args)` (cached already: a lookup, no work), `cache_clear()` and
`cache_info()` (its stats: functools' names, so code that clears every lab cache finds it).
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, ParamSpec, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
P = ParamSpec("P")


@dataclass(frozen=True, slots=True, kw_only=True)
class FlightStats:
    hits: int
    misses: int
    joins: int
    evictions: int
    items: int
    bytes: int


class _Flight:
    """One computation in progress: its owner thread, then its value or exception."""

    __slots__ = ("done", "error", "owner", "value")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.owner = threading.get_ident()
        self.value: object = None
        self.error: BaseException | None = None


class SingleFlight(Generic[K, V]):
    def __init__(self, *, max_items: int | None = None, max_bytes: int | None = None,
                 size: Callable[[V], int] = lambda v: 0) -> None:
        if max_items is not None and max_items < 1:
            raise ValueError(f"max_items must be >= 1 or None, got {max_items}")
        if max_bytes is not None and max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0 or None, got {max_bytes}")
        self.max_items, self.max_bytes, self._size = max_items, max_bytes, size
        self._lock = threading.Lock()
        self._values: OrderedDict[K, tuple[V, int]] = OrderedDict()  # oldest use first
        self._flights: dict[K, _Flight] = {}
        self._bytes = 0
        self._hits = self._misses = self._joins = self._evictions = 0

    def get(self, key: K, compute: Callable[[], V]) -> V:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                self._hits += 1
                return self._values[key][0]
            flight = self._flights.get(key)
            owner = flight is None
            if owner:
                flight = self._flights[key] = _Flight()
                self._misses += 1
            elif flight.owner == threading.get_ident():
                raise RuntimeError(f"computing {key!r} asked for {key!r} again (a cycle)")
            else:
                self._joins += 1
        if not owner:
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            return flight.value  # type: ignore[return-value]
        try:
            value = compute()
        except BaseException as e:
            flight.error = e
            raise
        else:
            flight.value = value
            self._keep(key, value)
            return value
        finally:
            with self._lock:
                del self._flights[key]
            flight.done.set()

    def _keep(self, key: K, value: V) -> None:
        n = self._size(value)
        if self.max_bytes is not None and n > self.max_bytes:
            return
        with self._lock:
            self._values[key] = (value, n)
            self._bytes += n
            while self._values and (
                    (self.max_items is not None and len(self._values) > self.max_items)
                    or (self.max_bytes is not None and self._bytes > self.max_bytes)):
                _, (_, m) = self._values.popitem(last=False)
                self._bytes -= m
                self._evictions += 1

    def peek(self, key: K) -> V | None:
        with self._lock:
            hit = self._values.get(key)
            return None if hit is None else hit[0]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._values

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._bytes = 0

    def stats(self) -> FlightStats:
        with self._lock:
            return FlightStats(hits=self._hits, misses=self._misses, joins=self._joins,
                               evictions=self._evictions, items=len(self._values),
                               bytes=self._bytes)


def single_flight(max_items: int | None = None) -> Callable[[Callable[P, V]], Callable[P, V]]:
    """Decorator: fn's results by positional arguments, in a SingleFlight of max_items values.
    The wrapper has `ready(*args)`, `cache_clear()`, `cache_info()` and `flight` (the
    SingleFlight)."""

    def wrap(fn: Callable[P, V]) -> Callable[P, V]:
        flight: SingleFlight[tuple, V] = SingleFlight(max_items=max_items)

        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> V:
            if kwargs:
                raise TypeError(f"{fn.__name__}: a single-flight function takes positional "
                                f"arguments only, got {sorted(kwargs)}")
            return flight.get(args, lambda: fn(*args))

        call.ready = lambda *args: args in flight  # type: ignore[attr-defined]
        call.cache_clear = flight.clear  # type: ignore[attr-defined]
        call.cache_info = flight.stats  # type: ignore[attr-defined]
        call.flight = flight  # type: ignore[attr-defined]
        return call

    return wrap
