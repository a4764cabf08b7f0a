"""Builds one tab's Gradio layout from its TabSpec; tabs/ui_wire.py wires its events."""

# No `from __future__ import annotations` here: Gradio evaluates every event handler's type
# hints when the app is built, and string annotations made that ~0.1 s of startup.

import json
from dataclasses import dataclass

import gradio as gr
from gradio.context import get_render_context

from core.errors import ParamError
from tabs import opening
from tabs.controls import Check, Control, Slider, Text, elem_id
from tabs.glossary import as_markdown as glossary_markdown
from tabs.metrics import to_markdown
from tabs.present import drawing
from tabs.spec import LiveSpec, RunSpec, TabSpec, render, render_live, run_params
from tabs.ui_draw import _handler, control_updates, draw_all, plot_data, served, title_markdown
from tabs.ui_wire import OPTIONS, wire_controls, wire_figures

__all__ = ["BuiltTab", "_handler", "build_tab", "draw_all", "plot_data"]

NOT_MEASURED = ("Not measured yet: times depend on this machine and on what else it runs, so "
                "they are taken only when you press “Measure on this machine” (a few seconds).")
STALE = ("The controls have moved since this was measured: the table is for the settings it "
         "names. Press “Measure on this machine” for the current ones.")
# Shows the stale note once the panel holds a measurement (browser only, nothing queued).
STALE_JS = """() => {
  const panel = document.querySelector(PANEL);
  const measured = panel && !panel.innerText.trim().startsWith(UNMEASURED);
  return measured ? {__type__: 'update', visible: true} : {__type__: 'update'};
}"""
HIDE_JS = "() => ({__type__: 'update', visible: false})"


def _component(c: Control, tab: TabSpec) -> gr.components.Component:
    common = dict(label=c.label, info=c.info or None, elem_id=elem_id(tab.id, c.name),
                  elem_classes=["hero"] if c is tab.hero else None)
    if isinstance(c, Text):
        return gr.Textbox(value=c.value, lines=4, max_length=c.max_bytes, **common)
    if isinstance(c, Check):
        return gr.Checkbox(value=c.value, **common)
    if isinstance(c, Slider):
        linked = tab.control(c.max_from).value if c.max_from else None
        return gr.Slider(
            minimum=c.minimum,
            maximum=c.maximum if linked is None else c.max_given(linked),
            value=c.value,
            step=c.step,
            precision=0 if c.integer else None,
            **common,
        )
    return gr.Radio(choices=list(c.choices), value=c.value, **common)


def _controls(tab: TabSpec) -> dict[str, gr.components.Component]:
    """The up-front controls, then the `more` ones folded under "More controls"; returned in
    the tab's control order (the order every update list uses)."""
    made = {c.name: _component(c, tab) for c in tab.controls if c.name not in tab.more}
    if tab.more:
        with gr.Accordion("More controls", open=False, elem_id=f"{tab.id}-more"):
            made |= {c.name: _component(c, tab) for c in tab.controls if c.name in tab.more}
    return {c.name: made[c.name] for c in tab.controls}


def _live_handler(live: LiveSpec, tab: TabSpec):
    """The measurement, with Gradio's progress bar over the panel (round by round)."""

    def handle(progress=gr.Progress(), *values: object):  # noqa: B008 (Gradio's own idiom)
        def report(done: int, total: int, what: str) -> None:
            progress((done, total), desc=f"Timing on this machine: {what}", unit="rounds")

        try:
            return render_live(live, tab, dict(zip(live.params, values, strict=True)), report)
        except ParamError as e:
            raise gr.Error(str(e)) from None

    handle.__name__ = live.name
    return handle


def _run_handler(run: RunSpec, tab: TabSpec):
    """Streams (session, text, then plot and table per figure, then the live panel)."""
    def handle(request: gr.Request | None, session: object, *values: object):
        try:
            params = run_params(tab, dict(zip(run.params, values, strict=True)))
            if session is None:
                session = run.session()
            snapshots = run.start(session, **params)
        except ParamError as e:
            raise gr.Error(str(e)) from None
        for snap in snapshots:
            out: list[object] = [session, run.text(snap)]
            for fig in tab.figures:
                with drawing(request):  # per snapshot: the generator may resume elsewhere
                    result = run.draws[fig.name](snap)
                    out += [served(fig, result), to_markdown(result.metrics)]
            yield [*out, run.live(snap)]

    handle.__name__ = run.name
    return handle


def _build_run(run: RunSpec, tab: TabSpec, comps: dict, outputs: dict, text: gr.Markdown,
               live: gr.Markdown, go: gr.Button, stop: gr.Button) -> None:
    """Generate streams snapshots into the text, figures and live panel; Stop cancels it (the
    engine retires the request as the generator closes). State is per browser session."""
    state = gr.State(None, time_to_live=900, delete_callback=run.close)
    flat = [x for f in tab.figures for x in outputs[f.name][:2]]
    event = go.click(_run_handler(run, tab), inputs=[state, *[comps[p] for p in run.params]],
                     outputs=[state, text, *flat, live], api_name=run.name,
                     concurrency_limit=2, concurrency_id="run", show_progress="minimal",
                     preprocess=False)
    stop.click(None, None, None, cancels=[event], api_visibility="private", queue=False)


def _open_run_text(run: RunSpec, tab: TabSpec):
    def handle(request: gr.Request | None, *values: object) -> str:
        if opening.select_skips(request, tab.id, "run"):  # the page load draws this tab
            return gr.skip()
        try:
            return run.text(run.final(**run_params(tab, dict(zip(run.params, values,
                                                                  strict=True)))))
        except ParamError as e:
            raise gr.Error(str(e)) from None

    return handle


def _build_live(live: LiveSpec, tab: TabSpec, comps: dict) -> None:
    """A Markdown panel filled by its own endpoint, only when the student presses "Measure on
    this machine": a measurement takes seconds (rounds shown on a progress bar) and no slider
    should wait for it. Once measured, moving a control it reads shows a note that the panel
    is for the settings it names (a browser-only event: no server work, no queue)."""
    gr.Markdown(f"#### {live.title}", elem_classes=["figure-title"])
    text = gr.Markdown(NOT_MEASURED, elem_id=f"{live.name}-live")
    stale = gr.Markdown(STALE, visible=False, elem_id=f"{live.name}-stale",
                        elem_classes=["clamp-note"])
    go = gr.Button("Measure on this machine", size="sm", elem_id=f"{live.name}-button")
    go.click(_live_handler(live, tab), inputs=[comps[p] for p in live.params],
             outputs=[text], api_name=live.name, trigger_mode="always_last",
             show_progress="full", concurrency_limit=1, concurrency_id="live", preprocess=False)
    go.click(None, None, [stale], js=HIDE_JS, queue=False, show_progress="hidden",
             api_visibility="private")
    shows = STALE_JS.replace("PANEL", json.dumps(f"#{live.name}-live")).replace(
        "UNMEASURED", json.dumps(NOT_MEASURED.split(":")[0]))
    for p in live.params:
        comps[p].change(None, None, [stale], js=shows, queue=False, show_progress="hidden",
                        api_visibility="private")


@dataclass(frozen=True)
class BuiltTab:
    """The components of one built tab, for app-level wiring (share links, page load)."""

    tab: TabSpec
    comps: dict[str, gr.components.Component]
    outputs: dict[str, tuple[gr.Plot, gr.Markdown, gr.Markdown]]  # plot, metrics, title
    run_text: gr.Markdown | None
    note: gr.Markdown  # the clamp note under the controls


def _hidden_note() -> dict:
    return gr.update(value="", visible=False)


def _reset_handler(tab: TabSpec):
    def handle(request: gr.Request) -> list[object]:
        d = tab.defaults()
        return [*control_updates(tab, d), _hidden_note(), *draw_all(tab, d, request)]

    return handle


def _preset_handler(tab: TabSpec):
    by_name = {p.name: p for p in tab.presets}

    def handle(name: str | None, request: gr.Request) -> list[object]:
        preset = by_name.get(name) if isinstance(name, str) else None
        if preset is None:
            return [gr.skip()] * (2 + len(tab.controls) + 3 * len(tab.figures))
        values = {**tab.defaults(), **preset.values}
        return [f"*{preset.why}*", *control_updates(tab, values), _hidden_note(),
                *draw_all(tab, values, request)]

    return handle


def _link_handler(tab: TabSpec):
    from urllib.parse import urlsplit

    from tabs.share import link_query

    def handle(request: gr.Request, *values: object) -> dict:
        query = link_query(tab, dict(zip([c.name for c in tab.controls], values, strict=True)))
        page = request.headers.get("referer") or str(request.url)
        base = urlsplit(page)._replace(query="", fragment="").geturl()
        return gr.update(value=f"{base}?{query}", visible=True)

    return handle


def _figure(fig, tab: TabSpec, drawn: bool) -> tuple[gr.Plot, gr.Markdown, gr.Markdown]:
    result = render(fig, tab) if drawn else None
    title = gr.Markdown(title_markdown(fig), elem_classes=["figure-title"],
                        elem_id=f"{fig.name}-title")
    plot = gr.Plot(value=None if result is None else served(fig, result), format="png",
                   label=fig.title, show_label=False, elem_id=f"{fig.name}-plot")
    with gr.Accordion("Numbers on this figure", open=False):
        table = gr.Markdown("Drawn when the tab opens." if result is None
                            else to_markdown(result.metrics), elem_id=f"{fig.name}-metrics")
    return plot, table, title


def build_tab(tab: TabSpec) -> BuiltTab:
    """Lay out the lesson, controls, Predict card, figures and metrics inside the current gr.Tab.

    Figures are drawn when the tab opens (its select event; the page's load draws the tab it
    opens on, tabs/shell.py), not while the app is built: startup then costs no figure at all.
    Built outside a gr.Tab, the default figures are drawn at once.
    """
    outputs: dict[str, tuple[gr.Plot, gr.Markdown, gr.Markdown]] = {}
    opened = get_render_context()  # the enclosing gr.Tab: its select event draws the tab
    on_open = [opened.select] if isinstance(opened, gr.Tab) else []
    card, lesson = tab.lesson_parts()
    with gr.Row(equal_height=False, elem_classes=["lab-row"]):
        with gr.Column(scale=1, min_width=300, elem_classes=["lab-controls"]):
            if tab.presets:
                preset = gr.Dropdown([p.name for p in tab.presets], value=None,
                                     label="Presets: a scenario in one click",
                                     elem_id=f"{tab.id}-preset")
                why = gr.Markdown("", elem_id=f"{tab.id}-preset-why")
            comps = _controls(tab)
            note = gr.Markdown(visible=False, elem_id=f"{tab.id}-clamp-note",
                               elem_classes=["clamp-note"])
            with gr.Row():
                reset = gr.Button("Reset to defaults", size="sm", elem_id=f"{tab.id}-reset")
                link = gr.Button("Link to this view", size="sm", elem_id=f"{tab.id}-link")
            link_box = gr.Textbox(label="Link to this view (copy it)", visible=False,
                                  interactive=False, buttons=["copy"],
                                  elem_id=f"{tab.id}-link-box")
            if tab.run is not None:
                with gr.Row():
                    go = gr.Button(tab.run.button, variant="primary", elem_id=f"{tab.id}-go")
                    stop = gr.Button("Stop", variant="stop", elem_id=f"{tab.id}-stop")
            gr.Markdown(lesson, elem_classes=["lesson"])
            with gr.Accordion("Glossary", open=False, elem_classes=["glossary-fold"]):
                gr.Markdown(glossary_markdown(), elem_classes=["glossary"])
        with gr.Column(scale=3, elem_classes=["lab-figures"]):
            if card:
                gr.Markdown(card, elem_classes=["predict-card"], elem_id=f"{tab.id}-predict")
            if tab.run is not None:
                run_text = gr.Markdown(
                    "Served when the tab opens." if on_open
                    else tab.run.text(tab.run.final(**run_params(tab))),
                    elem_id=f"{tab.run.name}-text", elem_classes=["run-text"])
            for fig in tab.figures:
                outputs[fig.name] = _figure(fig, tab, drawn=not on_open)
            if tab.live is not None:
                _build_live(tab.live, tab, comps)
            if tab.run is not None:
                gr.Markdown("#### Measured on this machine (never on a figure)",
                            elem_classes=["figure-title"])
                run_live = gr.Markdown("Measured when you generate.",
                                       elem_id=f"{tab.run.name}-live")
    flat = [x for f in tab.figures for x in outputs[f.name]]
    controls = list(comps.values())
    reset.click(_reset_handler(tab), None, [*controls, note, *flat], api_visibility="private",
                **{**OPTIONS, "preprocess": True})
    if tab.presets:
        preset.input(_preset_handler(tab), [preset], [why, *controls, note, *flat],
                     api_visibility="private", **{**OPTIONS, "preprocess": True})
    link.click(_link_handler(tab), controls, [link_box], api_visibility="private",
               preprocess=False, queue=False)
    if tab.run is not None:
        _build_run(tab.run, tab, comps, outputs, run_text, run_live, go, stop)
        if on_open:
            gr.on(on_open, _open_run_text(tab.run, tab),
                  inputs=[comps[p] for p in tab.run.params], outputs=[run_text],
                  api_visibility="private", preprocess=False, show_progress="hidden")
    wire_figures(tab, comps, outputs, on_open)
    wire_controls(tab, comps, outputs, note)
    return BuiltTab(tab, comps, outputs, run_text if tab.run is not None else None, note)
