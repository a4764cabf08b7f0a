"""Presentation mode, per browser session: projector-sized figure text for the sessions that ask.

A session turns it on with the page's toggle or a `?present=1` link; the page load and the
toggle record it here by session hash, the page's unload forgets it. Every figure a session's
events draw is drawn inside `drawing(request)`, i.e. tabs.figure.presenting(on) for that session
only (a ContextVar, never a process-wide switch). API calls (gradio_client) never set it, so
they get the figures the baselines pin.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager

import gradio as gr

from tabs.figure import presenting

_ON: set[str] = set()  # session hashes presenting now
_LOCK = threading.Lock()


def session_key(request: gr.Request | None) -> str | None:
    """The browser session a page event comes from (None for API calls without one)."""
    return getattr(request, "session_hash", None) if request is not None else None


def set_mode(request: gr.Request | None, on: bool) -> None:
    key = session_key(request)
    if key is None:
        return
    with _LOCK:
        (_ON.add if on else _ON.discard)(key)


def is_on(request: gr.Request | None) -> bool:
    key = session_key(request)
    with _LOCK:
        return key is not None and key in _ON


def forget(request: gr.Request | None) -> None:
    set_mode(request, False)


def drawing(request: gr.Request | None) -> AbstractContextManager[None]:
    """The figure context for this session's draws."""
    return presenting(is_on(request))
