"""The page around the tabs: on load, restore the tab and controls a shared link names and
draw that tab's figures; show a note when part of the link could not be honoured; the
presentation-mode toggle (per browser session: tabs/present.py) redraws the open tab."""

# No `from __future__ import annotations` here: Gradio evaluates every event handler's type
# hints when the app is built, and string annotations made that ~0.1 s of startup.

import gradio as gr

from tabs import opening, present
from tabs.share import parse_query
from tabs.spec import run_params
from tabs.ui import BuiltTab
from tabs.ui_draw import control_updates, draw_all

# The body class the CSS widens the figure column by (assets/lab.css).
PRESENT_JS = "(on) => { document.body.classList.toggle('presenting', !!on); return []; }"


def _opener(tab_id: str):
    def opened() -> str:
        return tab_id

    return opened


def wire_page_load(demo: gr.Blocks, tabs: gr.Tabs, note: gr.Markdown, built: list[BuiltTab],
                   items: list[gr.Tab], toggle: gr.Checkbox) -> None:
    opened = gr.State(built[0].tab.id)  # the open tab, which the toggle redraws
    shown = gr.State("")  # the tab the page load draws (tabs/opening.py)
    controls = [comp for b in built for comp in b.comps.values()]
    outputs = [x for b in built for f in b.tab.figures for x in b.outputs[f.name]]
    texts = [b.run_text for b in built if b.run_text is not None]
    for b, item in zip(built, items, strict=True):  # which tab the toggle redraws
        item.select(_opener(b.tab.id), None, opened, queue=False, api_visibility="private",
                    show_progress="hidden")

    def restore(request: gr.Request) -> list[object]:
        query = dict(request.query_params)
        r = parse_query(query)
        present.set_mode(request, r.present)
        linked = "tab" in query  # else leave the page alone: a click may already be on its way
        shown = r.tab.id if linked else built[0].tab.id
        opening.load_will_draw(request, shown)  # its select event, if it fires, draws nothing
        out: list[object] = [gr.Tabs(selected=r.tab.id) if linked else gr.skip(),
                             gr.update(value="This link could not be followed exactly:\n"
                                       + "\n".join(f"- {n}" for n in r.notes),
                                       visible=bool(r.notes)), shown,
                             r.present if r.present else gr.skip()]
        for b in built:
            out += (control_updates(b.tab, r.values, only=set(query)) if b.tab is r.tab
                    else [gr.skip()] * len(b.tab.controls))
        return out

    def draw(request: gr.Request, tab_id: str, *values: object) -> list[object]:
        """The opened tab's figures (and run text) for its controls' values; skip the rest."""
        per_tab: dict[str, dict[str, object]] = {}
        i = 0
        for b in built:
            per_tab[b.tab.id] = dict(zip(b.comps, values[i : i + len(b.comps)], strict=True))
            i += len(b.comps)
        out: list[object] = []
        for b in built:
            n = 3 * len(b.tab.figures)
            out += (draw_all(b.tab, per_tab[b.tab.id], request) if b.tab.id == tab_id
                    else [gr.skip()] * n)
        for b in built:
            if b.run_text is not None:
                run = b.tab.run
                out.append(run.text(run.final(**run_params(b.tab, per_tab[b.tab.id])))
                           if b.tab.id == tab_id else gr.skip())
        opening.load_drew(request)
        return out

    def record(on: bool, request: gr.Request) -> None:
        present.set_mode(request, bool(on))

    redraw = dict(api_visibility="private", concurrency_limit=2, concurrency_id="figures",
                  show_progress="minimal", preprocess=False)
    demo.load(restore, None, [tabs, note, shown, toggle, *controls],
              api_visibility="private", queue=False).then(
        draw, [shown, *controls], [*outputs, *texts], **redraw)
    toggle.change(None, [toggle], None, js=PRESENT_JS)  # also when a link turns it on
    toggle.input(record, [toggle], None, queue=False, api_visibility="private").then(
        draw, [opened, *controls], [*outputs, *texts], **redraw)
    demo.unload(present.forget)
