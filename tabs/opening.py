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

import gradio as gr

from tabs.sessions import SessionStore

_PENDING: SessionStore[tuple[str, frozenset[str]]] = SessionStore()  # (tab, select draws to skip)


def load_will_draw(request: gr.Request | None, tab_id: str,
                   parts: tuple[str, ...] = ("figures",)) -> None:
    """Mark tab_id: the first select draw of each of `parts` (its figures; a run tab's text
    too) is skipped."""
    _PENDING.put(request, (tab_id, frozenset(parts)))


def select_skips(request: gr.Request | None, tab_id: str, part: str = "figures") -> bool:
    """True for the select the page load caused (the first of the marked tab, per part): it
    draws nothing, the load draws the tab."""

    def consume(pending: tuple[str, frozenset[str]] | None
                ) -> tuple[tuple[str, frozenset[str]] | None, bool]:
        if pending is None or pending[0] != tab_id or part not in pending[1]:
            return pending, False
        rest = pending[1] - {part}
        return ((tab_id, rest) if rest else None), True

    return _PENDING.change(request, consume, False)
