"""Which draw opens a tab on a shared link, per browser session.

A link's tab is drawn by the page load (tabs/shell.py), always: after the link's values are
restored, so it draws exactly those. Selecting that tab from the server also fires the tab's
select event, which draws a tab when a student opens it (tabs/ui_wire.py); drawn twice, the
tab would cost twice. So the load marks the tab here before it is selected, and the select
event's draw skips a tab so marked; the load's draw clears the mark when it is done, so a
later click always draws (a select that arrives after that draws again, correctly).
"""

from __future__ import annotations

import threading

import gradio as gr

from tabs.present import session_key

_PENDING: dict[str, str] = {}  # session hash -> the tab the page load is drawing
_LOCK = threading.Lock()


def load_will_draw(request: gr.Request | None, tab_id: str) -> None:
    key = session_key(request)
    if key is not None:
        with _LOCK:
            _PENDING[key] = tab_id


def select_skips(request: gr.Request | None, tab_id: str) -> bool:
    """True while the page load is drawing tab_id: its select event then draws nothing."""
    key = session_key(request)
    with _LOCK:
        return key is not None and _PENDING.get(key) == tab_id


def load_drew(request: gr.Request | None) -> None:
    key = session_key(request)
    if key is not None:
        with _LOCK:
            _PENDING.pop(key, None)
