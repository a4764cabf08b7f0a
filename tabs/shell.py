"""The page around the tabs: on load, restore the tab and controls a shared link names and draw
that tab; show a note when part of the link could not be honoured; the presentation-mode toggle
redraws the open tab.

Gradio 6's page refreshes the loading state of every component any event has touched, on every
status message of every event, for the rest of the page's life. So the page load touches only
a few components on the server: it sends the link's control values as one hidden JSON text,
which the browser applies to the controls itself (window.lab.apply, assets/lab_head.html), and
then sets the shown tab's hidden kick number (window.lab.kick), whose change draws that tab
(tabs/ui_wire.py) with the values now on the page. Were the load one event with every control
of every tab as outputs, each later slider release would pay for ~280 components' loading
state instead of its own tab's ~20.

The selects the page fires by itself (the first tab's as the page mounts, the linked tab's
when the load selects it) draw too: a select and the link's kick are triggers of the same draw
event, whose trigger_mode="always_last" runs them one after the other, the kick's last, with
the link's values; and each draw only draws what its page does not show yet (tabs/ui_draw.py),
so the mount's draw of the first tab is a few render-cache lookups, not a second render.
"""

# No `from __future__ import annotations` here: Gradio evaluates every event handler's type
# hints when the app is built, and string annotations made that ~0.1 s of startup.

import json

import gradio as gr

from tabs.share import parse_query
from tabs.ui import BuiltTab
from tabs.ui_set import control_updates


def wire_page_load(demo: gr.Blocks, tabs: gr.Tabs, note: gr.Markdown, built: list[BuiltTab],
                   toggle: gr.Checkbox, presenting: gr.State) -> None:
    controls = [comp for b in built for comp in b.comps.values()]
    payload = gr.Textbox(visible="hidden", elem_id="link-payload", container=False)
    kicks = [b.kick for b in built]
    ids = json.dumps([b.tab.id for b in built])

    def restore(request: gr.Request) -> list[object]:
        query = dict(request.query_params)
        r = parse_query(query)
        linked = "tab" in query  # else leave the page alone: a click may already be on its way
        shown = r.tab.id if linked else built[0].tab.id
        updates: list[object] = []
        for b in built:
            ups, _ = (control_updates(b.tab, {**r.values, **b.parts.fixed}) if b.tab is r.tab
                      else ({}, {}))
            named = {c.name for c in b.tab.controls if c.name in query and c.name in ups}
            if named:  # and every slider whose maximum follows them, with that maximum
                named |= {n for n, u in ups.items() if "maximum" in u}
            updates += [ups[c.name] if c.name in named else gr.skip()
                        for c in b.tab.controls]
        return [gr.Tabs(selected=r.tab.id) if linked else gr.skip(),
                gr.update(value="This link could not be followed exactly:\n"
                          + "\n".join(f"- {n}" for n in r.notes), visible=bool(r.notes)),
                r.present if r.present else gr.skip(),
                json.dumps({"controls": updates, "tab": shown})]

    demo.load(restore, None, [tabs, note, toggle, payload], api_visibility="private",
              queue=False).then(
        None, [payload], controls, js="(p) => window.lab.apply(p)", queue=False).then(
        None, [payload], kicks, js=f"(p) => window.lab.kick(p, {ids})", queue=False)
    toggle.change(None, [toggle], None, js="(on) => window.lab.present(on)")
    toggle.change(bool, [toggle], [presenting], queue=False, show_progress="hidden",
                  api_visibility="private")
    toggle.input(None, None, kicks, js=f"() => window.lab.kickOpen({ids})", queue=False)
