"""The page around the tabs: on load, restore the tab and controls a shared link names and
draw that tab's figures; show a note when part of the link could not be honoured; the
presentation-mode toggle (per browser session: tabs/present.py) redraws the open tab.

Gradio 6's page refreshes the loading state of every component any event has touched, on every
status message of every event, for the rest of the page's life. So the page load touches only
a few components on the server: it sends the link's control values as one hidden JSON text,
which the browser applies to the controls itself (APPLY_JS), and then it sets the opened tab's
hidden "draw" number (KICK_JS), whose change draws that one tab. Were the load one event with
every control and figure of every tab as inputs and outputs (as it was), each later slider
release would pay for ~280 components' loading state instead of its own tab's ~20 (about
0.4 s of a 1 s release in chromium on 2 busy cores).
"""

# No `from __future__ import annotations` here: Gradio evaluates every event handler's type
# hints when the app is built, and string annotations made that ~0.1 s of startup.

import json

import gradio as gr

from tabs import opening, present, sessions
from tabs.share import parse_query
from tabs.spec import run_params
from tabs.ui import BuiltTab
from tabs.ui_draw import _drawers, control_updates, union_params

# The body class the CSS widens the figure column by (assets/lab.css).
PRESENT_JS = "(on) => { document.body.classList.toggle('presenting', !!on); return []; }"
# The link's control updates (one per control of every tab, in order; skips for the rest).
APPLY_JS = "(payload) => JSON.parse(payload || '{\"controls\": []}').controls"
# A new value for the hidden draw number of the tab the link opens (else: leave them alone).
KICK_JS = """(payload) => {
  const tab = JSON.parse(payload || '{}').tab;
  return TAB_IDS.map((id) => ({__type__: 'update', ...(id === tab ? {value: Date.now()} : {})}));
}"""
# The same for the tab open now (its button is selected), when presentation mode changes.
KICK_OPEN_JS = """() => {
  const b = document.querySelector('button[role=tab][aria-selected=true]');
  const tab = b && b.id.replace(/^tab-/, '').replace(/-button$/, '');
  return TAB_IDS.map((id) => ({__type__: 'update', ...(id === tab ? {value: Date.now()} : {})}));
}"""


def _kick_draw(b: BuiltTab):
    """The tab's figures (one by one) and run text for its controls' values: the draw a page
    load (or the presentation toggle) asks for by setting the tab's hidden number."""
    draw = _drawers(b.tab.figures, b.tab)
    names = union_params(b.tab.figures)
    n = 3 * len(b.tab.figures)
    run = b.tab.run

    def handle(request: gr.Request, *values: object):
        by_name = dict(zip(b.comps, values, strict=True))
        for out in draw(request, *[by_name[p] for p in names]):
            yield [*out, gr.skip()] if run is not None else out
        if run is not None:
            yield [*([gr.skip()] * n), run.text(run.final(**run_params(b.tab, by_name)))]

    handle.__name__ = f"{b.tab.id}_link_draw"
    return handle


def wire_page_load(demo: gr.Blocks, tabs: gr.Tabs, note: gr.Markdown, built: list[BuiltTab],
                   toggle: gr.Checkbox) -> None:
    controls = [comp for b in built for comp in b.comps.values()]
    payload = gr.Textbox(visible="hidden", elem_id="link-payload", container=False)
    tab_ids = json.dumps([b.tab.id for b in built])
    kicks = [gr.Number(visible="hidden", elem_id=f"{b.tab.id}-draw", container=False)
             for b in built]
    redraw = dict(api_visibility="private", concurrency_limit=2, concurrency_id="figures",
                  show_progress="minimal", preprocess=False)
    for b, kick in zip(built, kicks, strict=True):
        outs = [x for f in b.tab.figures for x in b.outputs[f.name]]
        kick.change(_kick_draw(b), list(b.comps.values()),
                    [*outs, *([b.run_text] if b.run_text is not None else [])], **redraw)

    def restore(request: gr.Request) -> list[object]:
        query = dict(request.query_params)
        r = parse_query(query)
        present.set_mode(request, r.present)
        linked = "tab" in query  # else leave the page alone: a click may already be on its way
        shown_tab = r.tab if linked else built[0].tab
        shown = shown_tab.id
        if shown != opening.MOUNT_TAB:  # the load selects it: that select draws nothing
            opening.load_will_draw(request, shown, ("figures", "run") if shown_tab.run is not None
                                   else ("figures",))
        updates: list[object] = []
        for b in built:
            updates += (control_updates(b.tab, r.values, only=set(query)) if b.tab is r.tab
                        else [gr.skip()] * len(b.tab.controls))
        return [gr.Tabs(selected=r.tab.id) if linked else gr.skip(),
                gr.update(value="This link could not be followed exactly:\n"
                          + "\n".join(f"- {n}" for n in r.notes), visible=bool(r.notes)),
                r.present if r.present else gr.skip(),
                json.dumps({"controls": updates, "tab": shown})]

    def record(on: bool, request: gr.Request) -> None:
        present.set_mode(request, bool(on))

    demo.load(restore, None, [tabs, note, toggle, payload], api_visibility="private",
              queue=False).then(
        None, [payload], controls, js=APPLY_JS, queue=False).then(
        None, [payload], kicks, js=KICK_JS.replace("TAB_IDS", tab_ids), queue=False)
    toggle.change(None, [toggle], None, js=PRESENT_JS)  # also when a link turns it on
    toggle.input(record, [toggle], None, queue=False, api_visibility="private").then(
        None, None, kicks, js=KICK_OPEN_JS.replace("TAB_IDS", tab_ids), queue=False)
    demo.unload(sessions.forget_all)  # presentation mode, the link's mark, the draw tickets
