"""Which draw opens a tab on a shared link, per browser session.

A link's tab is drawn by the page load (tabs/shell.py), always: after the link's values are
restored, so it draws exactly those. Selecting that tab from the server also fires the tab's
select event, which draws a tab when a student opens it (tabs/ui_wire.py); drawn twice, the
tab would cost twice. Worse, that select carries the controls' values from before the link's
were applied, and under load it can wait in the queue until the load's draw is done: drawn
then, it would put the defaults back over the link's figures. So the load marks the tab here
before it selects it, and the first select of that tab in the session consumes the mark and
draws nothing, whenever it arrives; every later select draws.
"""

from __future__ import annotations

import threading

import gradio as gr

from tabs.present import session_key

_PENDING: dict[str, tuple[str, set[str]]] = {}  # session -> (tab, its select draws to skip)
_LOCK = threading.Lock()


def load_will_draw(request: gr.Request | None, tab_id: str,
                   parts: tuple[str, ...] = ("figures",)) -> None:
    """Mark tab_id: the first select draw of each of `parts` (its figures; a run tab's text
    too) is skipped."""
    key = session_key(request)
    if key is not None:
        with _LOCK:
            _PENDING[key] = (tab_id, set(parts))


def select_skips(request: gr.Request | None, tab_id: str, part: str = "figures") -> bool:
    """True for the select the page load caused (the first of the marked tab, per part): it
    draws nothing, the load draws the tab."""
    key = session_key(request)
    with _LOCK:
        tab, parts = _PENDING.get(key, ("", set())) if key is not None else ("", set())
        if tab != tab_id or part not in parts:
            return False
        parts.discard(part)
        if not parts:
            del _PENDING[key]
        return True


def forget(request: gr.Request | None) -> None:
    """The session's page is gone (Gradio's unload)."""
    key = session_key(request)
    if key is not None:
        with _LOCK:
            _PENDING.pop(key, None)
