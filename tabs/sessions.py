"""Per-browser-session state: one value per session hash, under one lock per store.

The page's events carry a `gr.Request` whose `session_hash` names the browser session; API
calls (gradio_client without a page) may carry none, and then nothing is stored and reads get
the default. Every store made here is forgotten together when the session's page unloads
(`forget_all`, wired once in tabs/shell.py), unless it is made to outlive a dropped
connection (`on_unload=False`, bounded in size instead).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

import gradio as gr

V = TypeVar("V")
R = TypeVar("R")


def session_key(request: gr.Request | None) -> str | None:
    """The browser session a page event comes from (None for API calls without one)."""
    return getattr(request, "session_hash", None) if request is not None else None


class SessionStore(Generic[V]):
    """A value per browser session.

    `on_unload=False` keeps a session's value past its page's unload, for a fact that must
    outlive a dropped connection: Gradio unloads a session when its heartbeat stops, and a
    page that reconnects (a network blip, a laptop waking) keeps its session hash. Such a store
    holds at most `max_sessions` values, dropping the oldest first.
    """

    def __init__(self, on_unload: bool = True, max_sessions: int = 10_000) -> None:
        self._values: dict[str, V] = {}
        self._lock = threading.Lock()
        self._max = max_sessions
        if on_unload:
            _STORES.append(self)

    def get(self, request: gr.Request | None, default: V) -> V:
        key = session_key(request)
        with self._lock:
            return self._values.get(key, default) if key is not None else default

    def put(self, request: gr.Request | None, value: V) -> None:
        key = session_key(request)
        if key is not None:
            with self._lock:
                self._store(key, value)

    def _store(self, key: str, value: V) -> None:
        if key not in self._values and len(self._values) >= self._max:
            del self._values[next(iter(self._values))]  # the oldest session's
        self._values[key] = value

    def change(self, request: gr.Request | None,
               fn: Callable[[V | None], tuple[V | None, R]], default: R) -> R:
        """Read-modify-write under the lock: `fn(value or None)` returns (new value or None to
        drop it, result). Without a session, `default` and nothing stored."""
        key = session_key(request)
        if key is None:
            return default
        with self._lock:
            new, result = fn(self._values.get(key))
            if new is None:
                self._values.pop(key, None)
            else:
                self._store(key, new)
            return result

    def forget(self, request: gr.Request | None) -> None:
        key = session_key(request)
        if key is not None:
            with self._lock:
                self._values.pop(key, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._values)


_STORES: list[SessionStore] = []


def forget_all(request: gr.Request | None) -> None:
    """The session's page is gone (Gradio's unload): drop it from every store."""
    for store in _STORES:
        store.forget(request)
