"""Builds one tab's Gradio layout from its TabSpec and wires every figure to a stable endpoint."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr
from gradio.context import get_render_context

from core.errors import ParamError
from tabs.controls import Check, Control, Slider, Text
from tabs.glossary import as_markdown as glossary_markdown
from tabs.metrics import to_markdown
from tabs.spec import LiveSpec, RunSpec, TabSpec, render, render_live, run_params
from tabs.ui_draw import _handler, control_updates, draw_all, plot_data

__all__ = ["BuiltTab", "_handler", "build_tab", "draw_all", "plot_data"]


def _component(c: Control, tab: TabSpec) -> gr.components.Component:
    if isinstance(c, Text):
        return gr.Textbox(value=c.value, label=c.label, info=c.info or None, lines=4,
                          max_length=c.max_bytes, elem_id=f"{tab.id}-{c.name}")
    if isinstance(c, Check):
        return gr.Checkbox(value=c.value, label=c.label, info=c.info or None,
                           elem_id=f"{tab.id}-{c.name}")
    if isinstance(c, Slider):
        linked = tab.control(c.max_from).value if c.max_from else None
        return gr.Slider(
            minimum=c.minimum,
            maximum=c.maximum if linked is None else c.max_given(linked),
            value=c.value,
            step=c.step,
            precision=0 if c.integer else None,
            label=c.label,
            info=c.info or None,
            elem_id=f"{tab.id}-{c.name}",
        )
    return gr.Radio(
        choices=list(c.choices),
        value=c.value,
        label=c.label,
        info=c.info or None,
        elem_id=f"{tab.id}-{c.name}",
    )


def _triggers(c: Control, comp: gr.components.Component) -> list:
    return [comp.release] if isinstance(c, Slider) else [comp.change]


def _live_handler(live: LiveSpec, tab: TabSpec):
    def handle(*values: object) -> str:
        try:
            return render_live(live, tab, dict(zip(live.params, values, strict=True)))
        except ParamError as e:
            raise gr.Error(str(e)) from None

    handle.__name__ = live.name
    return handle


def _run_handler(run: RunSpec, tab: TabSpec):
    """Streams (session, text, then plot and table per figure, then the live panel)."""
    figures = [f.name for f in tab.figures]

    def handle(session: object, *values: object):
        try:
            params = run_params(tab, dict(zip(run.params, values, strict=True)))
            if session is None:
                session = run.session()
            snapshots = run.start(session, **params)
        except ParamError as e:
            raise gr.Error(str(e)) from None
        for snap in snapshots:
            out: list[object] = [session, run.text(snap)]
            for name in figures:
                result = run.draws[name](snap)
                out += [plot_data(result.figure), to_markdown(result.metrics)]
            yield [*out, run.live(snap)]

    handle.__name__ = run.name
    return handle


def _build_run(run: RunSpec, tab: TabSpec, comps: dict, outputs: dict, text: gr.Markdown,
               live: gr.Markdown, go: gr.Button, stop: gr.Button) -> None:
    """Generate streams snapshots into the text, figures and live panel; Stop cancels it (the
    engine retires the request as the generator closes). State is per browser session."""
    state = gr.State(None, time_to_live=900, delete_callback=run.close)
    flat = [x for f in tab.figures for x in outputs[f.name]]
    event = go.click(_run_handler(run, tab), inputs=[state, *[comps[p] for p in run.params]],
                     outputs=[state, text, *flat, live], api_name=run.name,
                     concurrency_limit=2, concurrency_id="run", show_progress="minimal",
                     preprocess=False)
    stop.click(None, None, None, cancels=[event], api_visibility="private", queue=False)


def _open_run_text(run: RunSpec, tab: TabSpec):
    def handle(*values: object) -> str:
        try:
            return run.text(run.final(**run_params(tab, dict(zip(run.params, values,
                                                                  strict=True)))))
        except ParamError as e:
            raise gr.Error(str(e)) from None

    return handle


def _build_live(live: LiveSpec, tab: TabSpec, comps: dict, opened: object) -> None:
    """A Markdown panel filled by its own endpoint: when the tab is opened, when one of its
    controls moves, and on "Measure again". Nothing is measured while the app is built."""
    gr.Markdown(f"#### {live.title}", elem_classes=["figure-title"])
    text = gr.Markdown("Measured when this tab opens.", elem_id=f"{live.name}-live")
    again = gr.Button("Measure again", size="sm", elem_id=f"{live.name}-button")
    triggers = [again.click]
    if isinstance(opened, gr.Tab):  # the gr.Tab this tab is built in (app.py), if any
        triggers.append(opened.select)
    triggers += [t for p in live.params for t in _triggers(tab.control(p), comps[p])]
    gr.on(triggers, _live_handler(live, tab), inputs=[comps[p] for p in live.params],
          outputs=[text], api_name=live.name, trigger_mode="always_last",
          show_progress="minimal", concurrency_limit=1, concurrency_id="live",
          preprocess=False)


@dataclass(frozen=True)
class BuiltTab:
    """The components of one built tab, for app-level wiring (share links, page load)."""

    tab: TabSpec
    comps: dict[str, gr.components.Component]
    outputs: dict[str, tuple[gr.Plot, gr.Markdown]]
    run_text: gr.Markdown | None


def _reset_handler(tab: TabSpec):
    def handle() -> list[object]:
        d = tab.defaults()
        return [*control_updates(tab, d), *draw_all(tab, d)]

    return handle


def _preset_handler(tab: TabSpec):
    by_name = {p.name: p for p in tab.presets}

    def handle(name: str | None) -> list[object]:
        preset = by_name.get(name) if isinstance(name, str) else None
        if preset is None:
            return [gr.skip()] * (1 + len(tab.controls) + 2 * len(tab.figures))
        values = {**tab.defaults(), **preset.values}
        return [f"*{preset.why}*", *control_updates(tab, values), *draw_all(tab, values)]

    return handle


def _link_handler(tab: TabSpec):
    from urllib.parse import urlsplit

    from tabs.share import link_query

    def handle(*values: object, request: gr.Request) -> dict:
        query = link_query(tab, dict(zip([c.name for c in tab.controls], values, strict=True)))
        page = request.headers.get("referer") or str(request.url)
        base = urlsplit(page)._replace(query="", fragment="").geturl()
        return gr.update(value=f"{base}?{query}", visible=True)

    return handle


def build_tab(tab: TabSpec) -> BuiltTab:
    """Lay out the lesson, controls, figures and metrics inside the current gr.Tab.

    Figures are drawn when the tab opens (its select event; the page's load draws the tab it
    opens on, tabs/shell.py), not while the app is built: startup then costs no figure at all.
    Built outside a gr.Tab, the default figures are drawn at once.
    """
    comps: dict[str, gr.components.Component] = {}
    outputs: dict[str, tuple[gr.Plot, gr.Markdown]] = {}
    opened = get_render_context()  # the enclosing gr.Tab: its select event opens the live text
    on_open = [opened.select] if isinstance(opened, gr.Tab) else []
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=300):
            if tab.presets:
                preset = gr.Dropdown([p.name for p in tab.presets], value=None,
                                     label="Presets: a scenario in one click",
                                     elem_id=f"{tab.id}-preset")
                why = gr.Markdown("", elem_id=f"{tab.id}-preset-why")
            for c in tab.controls:
                comps[c.name] = _component(c, tab)
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
            gr.Markdown(tab.lesson(), elem_classes=["lesson"])
            with gr.Accordion("Glossary", open=False):
                gr.Markdown(glossary_markdown(), elem_classes=["glossary"])
        with gr.Column(scale=3):
            if tab.run is not None:
                run_text = gr.Markdown(
                    "Served when the tab opens." if on_open
                    else tab.run.text(tab.run.final(**run_params(tab))),
                    elem_id=f"{tab.run.name}-text", elem_classes=["run-text"])
            for fig in tab.figures:
                result = None if on_open else render(fig, tab)
                gr.Markdown(f"#### {fig.title}", elem_classes=["figure-title"])
                plot = gr.Plot(
                    value=None if result is None else plot_data(result.figure),
                    format="png",
                    label=fig.title,
                    show_label=False,
                    elem_id=f"{fig.name}-plot",
                )
                with gr.Accordion("Numbers on this figure", open=False):
                    table = gr.Markdown(
                        "Drawn when the tab opens." if result is None
                        else to_markdown(result.metrics), elem_id=f"{fig.name}-metrics")
                outputs[fig.name] = (plot, table)
            if tab.live is not None:
                _build_live(tab.live, tab, comps, opened)
            if tab.run is not None:
                gr.Markdown("#### Measured on this machine (never on a figure)",
                            elem_classes=["figure-title"])
                run_live = gr.Markdown("Measured when you generate.",
                                       elem_id=f"{tab.run.name}-live")
    flat = [x for f in tab.figures for x in outputs[f.name]]
    reset.click(_reset_handler(tab), None, [*comps.values(), *flat], api_visibility="private",
                concurrency_limit=2, concurrency_id="figures", show_progress="minimal")
    if tab.presets:
        preset.input(_preset_handler(tab), [preset], [why, *comps.values(), *flat],
                     api_visibility="private", concurrency_limit=2, concurrency_id="figures",
                     show_progress="minimal")
    link.click(_link_handler(tab), list(comps.values()), [link_box], api_visibility="private",
               preprocess=False, queue=False)
    if tab.run is not None:
        _build_run(tab.run, tab, comps, outputs, run_text, run_live, go, stop)
        if on_open:
            gr.on(on_open, _open_run_text(tab.run, tab),
                  inputs=[comps[p] for p in tab.run.params], outputs=[run_text],
                  api_visibility="private", preprocess=False, show_progress="hidden")
    linked = _link_maxima(tab, comps)
    for fig in tab.figures:
        handler = _handler(fig, tab)
        inputs = [comps[p] for p in fig.params]
        chained = {src for src, (dep, _) in linked.items() if dep in fig.params}
        triggers = [] if tab.run is not None else [
            t for p in fig.params if p not in chained for t in _triggers(tab.control(p), comps[p])
        ]
        options = dict(
            trigger_mode="always_last",
            show_progress="minimal",
            concurrency_limit=2,
            concurrency_id="figures",
            preprocess=False,  # raw values: our validation names the parameter and its range
        )
        if not triggers:  # a run tab: the figure's endpoint opens with the tab
            gr.on(on_open or None, handler, inputs=inputs, outputs=list(outputs[fig.name]),
                  api_name=fig.name, **options)
            continue
        gr.on(
            triggers,
            handler,
            inputs=inputs,
            outputs=list(outputs[fig.name]),
            api_name=fig.name,
            **options,
        )
        if on_open:
            gr.on(on_open, handler, inputs=inputs, outputs=list(outputs[fig.name]),
                  api_visibility="private", **options)
        for src in chained:  # redraw after the linked slider has moved, never before
            linked[src][1].then(
                handler,
                inputs=inputs,
                outputs=list(outputs[fig.name]),
                api_visibility="private",
                **options,
            )
    return BuiltTab(tab, comps, outputs, run_text if tab.run is not None else None)


def _follower(c: Slider):
    def follow(v: float, cur: float) -> gr.Slider:
        top = c.max_given(v)
        return gr.Slider(maximum=top, value=min(cur, top))

    return follow


def _link_maxima(tab: TabSpec, comps: dict) -> dict[str, tuple[str, object]]:
    """For each slider with max_from: on release of the source, set this slider's maximum to the
    source's value and move it down to it if above. Returns {source: (dependent, event)}."""
    links = {}
    for c in tab.controls:
        if isinstance(c, Slider) and c.max_from is not None:
            src, dep = comps[c.max_from], comps[c.name]

            event = src.release(
                _follower(c),
                inputs=[src, dep],
                outputs=[dep],
                queue=False,
                api_visibility="private",
                show_progress="hidden",
            )
            links[c.max_from] = (c.name, event)
    return links
