"""The page around the tabs: on load, restore the tab and controls a shared link names and
draw that tab's figures; show a note when part of the link could not be honoured."""

from __future__ import annotations

import gradio as gr

from tabs.share import parse_query
from tabs.spec import run_params
from tabs.ui import BuiltTab
from tabs.ui_draw import control_updates, draw_all


def wire_page_load(demo: gr.Blocks, tabs: gr.Tabs, note: gr.Markdown,
                   built: list[BuiltTab]) -> None:
    opened = gr.State(built[0].tab.id)
    controls = [comp for b in built for comp in b.comps.values()]
    outputs = [x for b in built for f in b.tab.figures for x in b.outputs[f.name]]
    texts = [b.run_text for b in built if b.run_text is not None]

    def restore(request: gr.Request) -> list[object]:
        query = dict(request.query_params)
        r = parse_query(query)
        linked = "tab" in query  # else leave the page alone: a click may already be on its way
        out: list[object] = [gr.Tabs(selected=r.tab.id) if linked else gr.skip(),
                             gr.update(value="This link could not be followed exactly:\n"
                                       + "\n".join(f"- {n}" for n in r.notes),
                                       visible=bool(r.notes)), r.tab.id]
        for b in built:
            out += (control_updates(b.tab, r.values, only=set(query)) if b.tab is r.tab
                    else [gr.skip()] * len(b.tab.controls))
        return out

    def draw(tab_id: str, *values: object) -> list[object]:
        """The opened tab's figures (and run text) for its controls' values; skip the rest."""
        per_tab: dict[str, dict[str, object]] = {}
        i = 0
        for b in built:
            per_tab[b.tab.id] = dict(zip(b.comps, values[i : i + len(b.comps)], strict=True))
            i += len(b.comps)
        out: list[object] = []
        for b in built:
            n = 2 * len(b.tab.figures)
            out += draw_all(b.tab, per_tab[b.tab.id]) if b.tab.id == tab_id else [gr.skip()] * n
        for b in built:
            if b.run_text is not None:
                run = b.tab.run
                out.append(run.text(run.final(**run_params(b.tab, per_tab[b.tab.id])))
                           if b.tab.id == tab_id else gr.skip())
        return out

    demo.load(restore, None, [tabs, note, opened, *controls], api_visibility="private",
              queue=False).then(
        draw, [opened, *controls], [*outputs, *texts], api_visibility="private",
        concurrency_limit=2, concurrency_id="figures", show_progress="minimal",
        preprocess=False)

