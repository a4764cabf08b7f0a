"""Which draw opens a tab when a page opens, per browser session.

The page load (tabs/shell.py) draws the tab the page shows, always: the first tab on a plain
page, a shared link's tab after its values are restored, so it draws exactly those. A tab's
select event also draws it (tabs/ui_wire.py), for a student opening it, and two selects fire
that the student never asked for:

- the mount's: the browser selects the first tab as the page mounts, before the load. Drawn,
  it would cost a whole tab's figures on every page, and on a link to another tab it competes
  for the figure slots with the link's own draw. So the first select of the first tab in a
  session draws nothing; the load draws that tab, or the linked one, which the student sees.
- the link's: selecting the linked tab fires its select, which carries the controls' values
  from before the link's were applied and under load can wait in the queue until the load's
  draw is done: drawn then, it would put the defaults back over the link's figures. So the load
  marks the tab here before it selects it, and the first select of that tab in the session
  consumes the mark and draws nothing, whenever it arrives; every later select draws.

Both count per part: a run tab's text and its figures are skipped once each.
"""

from __future__ import annotations

import gradio as gr

from tabs.registry import REGISTRY
from tabs.sessions import SessionStore

MOUNT_TAB = REGISTRY[0].id  # the tab a page shows as it mounts, before the load runs

# Parts whose mount select came. Kept past an unload: a page that reconnects keeps its session,
# and forgetting would make the student's next click on the first tab draw nothing.
_MOUNTED: SessionStore[frozenset[str]] = SessionStore(on_unload=False)
_PENDING: SessionStore[tuple[str, frozenset[str]]] = SessionStore()  # (tab, select draws to skip)


def load_will_draw(request: gr.Request | None, tab_id: str,
                   parts: tuple[str, ...] = ("figures",)) -> None:
    """Mark tab_id, which the load is about to select: the first select draw of each of `parts`
    (its figures; a run tab's text too) is skipped."""
    _PENDING.put(request, (tab_id, frozenset(parts)))


def _mount_select(request: gr.Request | None, tab_id: str, part: str) -> bool:
    if tab_id != MOUNT_TAB:
        return False

    def first(seen: frozenset[str] | None) -> tuple[frozenset[str], bool]:
        seen = seen or frozenset()
        return seen | {part}, part not in seen

    return _MOUNTED.change(request, first, False)


def select_skips(request: gr.Request | None, tab_id: str, part: str = "figures") -> bool:
    """True for a select the page's opening caused (the mount's, or the load's of the marked
    tab, once per part): it draws nothing, the load draws the tab shown."""
    if _mount_select(request, tab_id, part):
        return True

    def consume(pending: tuple[str, frozenset[str]] | None
                ) -> tuple[tuple[str, frozenset[str]] | None, bool]:
        if pending is None or pending[0] != tab_id or part not in pending[1]:
            return pending, False
        rest = pending[1] - {part}
        return ((tab_id, rest) if rest else None), True

    return _PENDING.change(request, consume, False)
