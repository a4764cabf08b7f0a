"""Where a forward's time goes: an opt-in tally of wall seconds by section.

`with tally() as t:` around a forward fills t (a dict) with the seconds spent inside each
`timed(name)` section the layers mark: "attention" (the sequence mixers' token mixing: the KDA
scan or steps, MLA attention over keys) and "expert_loads" (experts fetched through the
provider). Outside a tally `timed` costs one context-variable read. The engine's StepSeconds
comes from here; no figure under a baseline ever shows these times.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_current: ContextVar[dict[str, float] | None] = ContextVar("clock", default=None)


@contextmanager
def tally() -> Iterator[dict[str, float]]:
    seconds: dict[str, float] = {}
    token = _current.set(seconds)
    try:
        yield seconds
    finally:
        _current.reset(token)


@contextmanager
def timed(name: str) -> Iterator[None]:
    seconds = _current.get()
    if seconds is None:
        yield
        return
    t0 = time.perf_counter()
    try:
        yield
    finally:
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - t0
