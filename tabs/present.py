"""Presentation mode, per browser session: projector-sized figure text for the sessions that ask.

A session turns it on with the page's toggle or a `?present=1` link; the page load and the
toggle record it here by session hash, the page's unload forgets it. Every figure a session's
events draw is drawn inside `drawing(request)`, i.e. tabs.figure.presenting(on) for that session
only (a ContextVar, never a process-wide switch). API calls (gradio_client) never set it, so
they get the figures the baselines pin.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

import gradio as gr

from tabs.figure import presenting
from tabs.sessions import SessionStore

_ON: SessionStore[bool] = SessionStore()  # sessions presenting now


def set_mode(request: gr.Request | None, on: bool) -> None:
    _ON.put(request, on)


def is_on(request: gr.Request | None) -> bool:
    return _ON.get(request, False)


def drawing(request: gr.Request | None) -> AbstractContextManager[None]:
    """The figure context for this session's draws."""
    return presenting(is_on(request))
