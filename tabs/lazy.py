"""Lazy names: a tab declares the functions it draws with as "module:attribute" strings, and
nothing is imported until the first call. Building the app (every TabSpec, every control)
therefore imports no figure module, no engine and no torch: torch loads after the first page.

  Lazy("tabs.fleet_ring.layout:fleet_ring_layout")   a callable: the first call imports the
                        module, looks the attribute up (ImportError / AttributeError name
                        the lazy name) and keeps it; every call then calls it
                        (one resolution imports at a time, process-wide: see _imports)
  lazy(fn_or_name)      a Lazy for a name, the function itself for a callable
  set_torch_threads(n)  torch's intra-op threads, set before the first engine module is
                        imported (now, if torch is loaded already)

Before the first resolution imports anything, torch is imported and set to `threads` threads
(FIGURE_TORCH_THREADS unless set_torch_threads said otherwise): the figures run small tensors,
where a second intra-op thread costs more than it saves (a chunked-KDA bmm took ~15 ms with 2
threads on a loaded 2-core machine vs ~1 ms with one).
"""

from __future__ import annotations

import importlib
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

FIGURE_TORCH_THREADS = 1

_lock = threading.Lock()
# One import at a time for every lazy name: two threads importing into one package whose modules
# import each other (core.paging's __init__, ledger, pack, pool) see each other's partially
# initialised modules: "cannot import name ... from partially initialized module", or
# importlib's _DeadlockError. Seen in chromium when a tab's clamp (an HTTP thread) and its draw
# (a queue worker) first resolved figures at once. Reentrant: an import may resolve a name too.
_imports = threading.RLock()
_torch_threads = FIGURE_TORCH_THREADS
_engine_ready = False


def set_torch_threads(n: int) -> None:
    global _torch_threads
    with _lock:
        _torch_threads = n
        if _engine_ready or "torch" in sys.modules:
            import torch

            torch.set_num_threads(n)


def _ready_engine() -> None:
    """Set torch's threads once, before the first resolution imports an engine module."""
    global _engine_ready
    with _lock:
        if _engine_ready:
            return
        import torch

        torch.set_num_threads(_torch_threads)
        _engine_ready = True


@dataclass(frozen=True)
class Lazy:
    """A function named by "module:attribute", imported on its first call."""

    name: str
    _fn: list = field(default_factory=list, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        module, _, attr = self.name.partition(":")
        if not module or not attr or ":" in attr:
            raise ValueError(f"a lazy name is 'module:attribute', got {self.name!r}")

    @property
    def module(self) -> str:
        return self.name.partition(":")[0]

    def resolve(self) -> Any:
        if self._fn:
            return self._fn[0]
        with _imports:
            if not self._fn:
                _ready_engine()
                module, _, attr = self.name.partition(":")
                try:
                    fn = getattr(importlib.import_module(module), attr)
                except AttributeError:
                    raise AttributeError(f"{self.name}: module {module} has no {attr}") from None
                self._fn.append(fn)
        return self._fn[0]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)


def lazy(fn: object) -> Any:
    """A Lazy for a "module:attribute" name; a callable as it is."""
    if isinstance(fn, str):
        return Lazy(fn)
    if not callable(fn):
        raise TypeError(f"expected a callable or a 'module:attribute' name, got {fn!r}")
    return fn
