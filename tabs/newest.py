"""The newest draw of a figure wins, per browser session.

Two draws of one figure can run at once: the figures' concurrency group has two slots, and a
student moves a second slider (or picks a preset) before the first move's redraw is done.
Whichever finished last would set the figure, so an older draw could overwrite a newer one and
leave the page contradicting its own controls. So every page draw takes a ticket per figure
when it starts (Gradio's queue starts a session's events in the order they were sent), and
draws a figure only while no newer draw of that figure has started, checking again before it
shows it: the newer draw reads the newer values. A figure the newer draw does not cover keeps
the older draw, which is then still the newest for it.

API calls (no browser session) always draw: each is its own request and answer.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import TypeVar

import gradio as gr

from tabs.sessions import SessionStore, session_key

_NEWEST: SessionStore[dict[str, int]] = SessionStore()  # figure name -> newest ticket
_COUNT = itertools.count(1)
T = TypeVar("T")


class Tickets:
    """One draw's claim on its figures."""

    def __init__(self, request: gr.Request | None, mine: dict[str, int]) -> None:
        self._request = request
        self._mine = mine

    def current(self, name: str) -> bool:
        """True while no newer draw of figure `name` has started in this session."""
        if session_key(self._request) is None:
            return True
        return _NEWEST.get(self._request, {}).get(name) == self._mine[name]

    def draw(self, name: str, draw: Callable[[], T]) -> T | None:
        """`draw()` of figure `name` while this is its newest draw; None if a newer draw claimed
        it before this one started drawing it or while it drew (the newer shows it instead)."""
        if not self.current(name):
            return None
        drawn = draw()
        return drawn if self.current(name) else None


def take(request: gr.Request | None, names: Iterable[str]) -> Tickets:
    """Claim figures `names` for a draw starting now."""
    if session_key(request) is None:
        return Tickets(None, {})

    def claim(newest: dict[str, int] | None) -> tuple[dict[str, int], dict[str, int]]:
        mine = {name: next(_COUNT) for name in names}
        return {**(newest or {}), **mine}, mine

    return Tickets(request, _NEWEST.change(request, claim, {}))
