"""Builds one tab's Gradio layout from its TabSpec; tabs/ui_wire.py wires its events."""

# No `from __future__ import annotations` here: Gradio evaluates every event handler's type
# hints when the app is built, and string annotations made that ~0.1 s of startup.

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import gradio as gr
from gradio.context import get_render_context

from core.errors import ParamError
from tabs.controls import Check, Control, Slider, Text, elem_id
from tabs.glossary import as_markdown as glossary_markdown
from tabs.spec import LiveSpec, TabSpec, render_live
from tabs.ui_draw import Drawn, TabParts, title_markdown
from tabs.ui_run import RUN_CONCURRENCY, build_run
from tabs.ui_set import PLAY, PLAY_EVERY_S, Stepper, wire_set
from tabs.ui_wire import wire_api, wire_draw

NOT_MEASURED = ("Not measured yet: times depend on this machine and on what else it runs, so "
                "they are taken only when you press “Measure on this machine” (a few seconds).")
STALE = ("The controls have moved since this was measured: the table is for the settings it "
         "names. Press “Measure on this machine” for the current ones.")


def _component(c: Control, tab: TabSpec, fixed: Mapping[str, object]) -> gr.components.Component:
    common = dict(label=c.label, info=c.info or None, elem_id=elem_id(tab.id, c.name),
                  elem_classes=["hero"] if c is tab.hero else None)
    if c.name in fixed:  # the class room's (app.py --class): its value, and why
        room = fixed[c.name]
        common |= dict(info=room.why, interactive=False)  # type: ignore[attr-defined]
        c = replace(c, value=room.value)  # type: ignore[attr-defined]
    if isinstance(c, Text):
        common["elem_classes"] = ["run-input"]
        return gr.Textbox(value=c.value, lines=4, max_lines=6, max_length=c.max_bytes, **common)
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


def _lead(lesson: str) -> tuple[str, str]:
    """(the lesson's question and first paragraph, the rest): the lead stays on the first
    screen, beside the hero in presentation mode (assets/page.css)."""
    blocks = lesson.strip().split("\n\n")
    n = 2 if blocks[0].lstrip().startswith("#") else 1
    return "\n\n".join(blocks[:n]), "\n\n".join(blocks[n:])


def _up_front(c: Control, tab: TabSpec) -> bool:
    """The hero, and a text a run needs (the Serve prompt), stay on the first screen."""
    return c is tab.hero or isinstance(c, Text)


def _controls(tab: TabSpec, fixed: Mapping[str, object],
              after_hero: Callable[[], None] | None = None
              ) -> dict[str, gr.components.Component]:
    """The hero (and a run's text) up front; every other control folded under "More
    controls", the secondary ones (`more`: seeds, dtypes) last. Returned in the tab's control
    order (the order every update list uses)."""
    made = {}
    for c in (c for c in tab.controls if _up_front(c, tab)):
        made[c.name] = _component(c, tab, fixed)
        if c is tab.hero and after_hero is not None:
            after_hero()
    rest = [c for c in tab.controls if not _up_front(c, tab) and c.name != tab.stepper]
    if rest:
        with gr.Accordion("More controls", open=False, elem_id=f"{tab.id}-more",
                          elem_classes=["lab-more"]):
            for c in sorted(rest, key=lambda c: c.name in tab.more):
                made[c.name] = _component(c, tab, fixed)
    return made


def _stepper(tab: TabSpec, fixed: Mapping[str, object]) -> Stepper:
    with gr.Row(equal_height=False, elem_classes=["lab-stepper"]):
        # no info line: the label and the buttons say it, and the figure stays on the first
        # screen at 1024 x 768 when presenting
        slider = _component(replace(tab.control(tab.stepper), info=""), tab, fixed)
        with gr.Column(scale=0, min_width=130):
            nxt = gr.Button("Next step ▶", size="sm", elem_id=f"{tab.id}-next-step")
            play = gr.Button(PLAY, size="sm", elem_id=f"{tab.id}-play")
    return Stepper(slider=slider, next=nxt, play=play,
                   timer=gr.Timer(PLAY_EVERY_S, active=False))


def live_handler(live: LiveSpec, tab: TabSpec):
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


def _build_live(live: LiveSpec, tab: TabSpec, comps: dict) -> tuple[gr.Markdown, gr.State]:
    """A Markdown panel filled by its own endpoint, only when the student presses "Measure on
    this machine": a measurement takes seconds (rounds shown on a progress bar) and no slider
    should wait for it. Once measured, a draw for other values of the controls it reads shows
    a note that the panel is for the settings it names (tabs/ui_draw.py)."""
    gr.Markdown(f"#### {live.title}", elem_classes=["figure-title"])
    text = gr.Markdown(NOT_MEASURED, elem_id=f"{live.name}-live")
    stale = gr.Markdown(STALE, visible=False, elem_id=f"{live.name}-stale",
                        elem_classes=["clamp-note"])
    measured = gr.State(None)
    go = gr.Button("Measure on this machine", size="sm", elem_id=f"{live.name}-button")
    inputs = [comps[p] for p in live.params]
    go.click(live_handler(live, tab), inputs=inputs, outputs=[text], api_name=live.name,
             trigger_mode="always_last", show_progress="full", concurrency_limit=1,
             concurrency_id="live", preprocess=False)

    def measuring(*values: object) -> dict:  # the values the panel is measured for
        return {measured: dict(zip(live.params, values, strict=True)),
                stale: gr.update(visible=False)}

    go.click(measuring, inputs=inputs, outputs=[measured, stale], queue=False,
             show_progress="hidden", preprocess=False, api_visibility="private")
    return stale, measured


@dataclass(frozen=True)
class BuiltTab:
    """A built tab: its parts (for the page load's link restore), its kick, and the buttons
    that open another tab (the app wires them to the page's gr.Tabs: app.py)."""

    parts: TabParts
    kick: gr.Number  # a new value redraws the tab for the values the page shows
    opens: dict[gr.Button, str]  # button -> the id of the tab it opens
    stepper: Stepper | None = None  # the step-through slider's buttons and timer

    @property
    def tab(self) -> TabSpec:
        return self.parts.tab

    @property
    def comps(self) -> dict[str, gr.components.Component]:
        return self.parts.comps


def _link_handler(tab: TabSpec):
    from urllib.parse import urlsplit

    from tabs.share import link_query

    def handle(request: gr.Request, *values: object) -> dict:
        query = link_query(tab, dict(zip([c.name for c in tab.controls], values, strict=True)))
        page = request.headers.get("referer") or str(request.url)
        base = urlsplit(page)._replace(query="", fragment="").geturl()
        return gr.update(value=f"{base}?{query}", visible=True)

    return handle


def _figure(fig) -> tuple[gr.Plot, gr.Markdown, gr.Markdown]:
    title = gr.Markdown(title_markdown(fig), elem_classes=["figure-title"],
                        elem_id=f"{fig.name}-title")
    plot = gr.Plot(value=None, format="png", label=fig.title, show_label=False,
                   elem_id=f"{fig.name}-plot")
    with gr.Accordion("Numbers on this figure", open=False):
        table = gr.Markdown("Drawn when the tab opens.", elem_id=f"{fig.name}-metrics")
    return plot, table, title


def _route(route: tuple[TabSpec, ...], here: TabSpec) -> dict[gr.Button, str]:
    """A row of buttons, one per tab on the route but this one, each opening its tab."""
    gr.Markdown("**Every stage has a tab: open one** (the route, in order)",
                elem_classes=["route-title"])
    opens = {}
    with gr.Row(elem_classes=["route"]):
        for t in route:
            if t is not here:
                opens[gr.Button(t.title, size="sm", elem_id=f"route-{t.id}", min_width=90)] = t.id
    return opens


def build_tab(tab: TabSpec, present: gr.Checkbox, present_state: gr.State | None = None,
              run_concurrency: int = RUN_CONCURRENCY, next_tab: TabSpec | None = None,
              route: tuple[TabSpec, ...] = (),
              fixed: Mapping[str, object] | None = None) -> BuiltTab:
    """Lay out the lesson, controls, Predict card, figures and metrics inside the current gr.Tab
    and wire its events. Figures are drawn when the tab opens (its select event), not while
    the app is built: startup costs no figure at all. `present` is the page's presentation
    toggle (an input of every draw); `present_state` mirrors it in the session's state for the
    Serve run, whose API takes no presentation flag. The tab ends with a button to `next_tab`
    (the next on the route); `route` (every tab) is the button row after `tab.route_after`.
    `fixed`: the controls the class room sets (core.experiments.serve.room_settings), shown
    with the room's value and why, not interactive; the presets that would change them are
    not offered."""
    fixed = dict(fixed or {})
    opens: dict[gr.Button, str] = {}
    figures: dict[str, tuple[gr.Plot, gr.Markdown, gr.Markdown]] = {}
    opened = get_render_context()  # the enclosing gr.Tab: its select event draws the tab
    on_open = [opened.select] if isinstance(opened, gr.Tab) else []
    card, lesson = tab.lesson_parts()
    preset = why = run_text = stale = measured = None
    with gr.Row(equal_height=False, elem_classes=["lab-row"]):
        # a run's streamed text sits in the controls column: wider there
        with gr.Column(scale=2 if tab.run is not None else 1, min_width=300,
                       elem_classes=["lab-controls"]):
            lead, rest = _lead(lesson)
            texts: list[gr.Markdown] = []

            def run_texts() -> None:  # a run's status and streamed text: above its prompt box,
                # at the top of the first screen in both modes
                texts.append(gr.Markdown("", elem_id=f"{tab.run.name}-status",
                                         elem_classes=["run-status"]))
                texts.append(gr.Markdown("Served when the tab opens.",
                                         elem_id=f"{tab.run.name}-text",
                                         elem_classes=["run-text"]))

            def run_buttons() -> None:  # Generate and Stop
                with gr.Row(elem_classes=["lab-run"]):
                    texts.append(gr.Button(tab.run.button, variant="primary",
                                           elem_id=f"{tab.id}-go"))
                    texts.append(gr.Button("Stop", variant="stop", elem_id=f"{tab.id}-stop"))

            def run_parts() -> None:  # under the hero: the lesson's question, Generate and
                gr.Markdown(lead, elem_classes=["lesson", "lesson-lead"])  # Stop, the text
                run_buttons()
                run_texts()

            comps = _controls(tab, fixed, run_parts if tab.run is not None else None)
            if tab.run is not None:
                go, stop, status, run_text = texts
            note = gr.Markdown(visible=False, elem_id=f"{tab.id}-clamp-note",
                               elem_classes=["clamp-note"])
            if tab.run is None:
                gr.Markdown(lead, elem_classes=["lesson", "lesson-lead"])
            offered = [p.name for p in tab.presets if all(
                k not in fixed or fixed[k].value == v for k, v in p.values.items())]
            if offered:
                preset = gr.Dropdown(offered, value=None,
                                     label="Presets: a scenario in one click",
                                     elem_id=f"{tab.id}-preset", elem_classes=["lab-presets"])
                why = gr.Markdown("", elem_id=f"{tab.id}-preset-why",
                                  elem_classes=["lab-presets"])
            with gr.Row(elem_classes=["lab-buttons"]):
                reset = gr.Button("Reset to defaults", size="sm", elem_id=f"{tab.id}-reset")
                link = gr.Button("Link to this view", size="sm", elem_id=f"{tab.id}-link")
            link_box = gr.Textbox(label="Link to this view (copy it)", visible=False,
                                  interactive=False, buttons=["copy"],
                                  elem_id=f"{tab.id}-link-box", elem_classes=["lab-buttons"])
            if rest:
                gr.Markdown(rest, elem_classes=["lesson"])
            with gr.Accordion("Glossary", open=False, elem_classes=["glossary-fold"]):
                gr.Markdown(glossary_markdown(), elem_classes=["glossary"])
        with gr.Column(scale=3, elem_classes=["lab-figures"]):
            if card:
                gr.Markdown(card, elem_classes=["predict-card"], elem_id=f"{tab.id}-predict")
            shown = tab.figures[:len(tab.figures) - len(tab.folded)]
            # the step-through slider sits above the first figure it moves
            stepped = next((f.name for f in tab.figures if tab.stepper in f.params), None)
            steppers: list[Stepper] = []

            def add(fig) -> None:
                if fig.name == stepped:
                    steppers.append(_stepper(tab, fixed))
                    comps[tab.stepper] = steppers[0].slider
                figures[fig.name] = _figure(fig)

            for fig in shown:
                add(fig)
                if fig.name == tab.route_after and route:
                    opens |= _route(route, tab)
            if tab.folded:
                titles = "; ".join(f.title for f in tab.figures[len(shown):])
                with gr.Accordion(f"More figures: {titles}", open=False,
                                  elem_id=f"{tab.id}-more-figures"):
                    for fig in tab.figures[len(shown):]:
                        add(fig)
            if tab.live is not None:
                stale, measured = _build_live(tab.live, tab, comps)
            if tab.run is not None:
                gr.Markdown("#### Measured on this machine (never on a figure)",
                            elem_classes=["figure-title"])
                run_live = gr.Markdown("Measured when you generate.",
                                       elem_id=f"{tab.run.name}-live")
            if next_tab is not None:
                nxt = gr.Button(f"Next on the route: {next_tab.title} →", variant="secondary",
                                elem_id=f"{tab.id}-next", elem_classes=["route-next"])
                opens[nxt] = next_tab.id
    kick = gr.Number(visible="hidden", elem_id=f"{tab.id}-draw", container=False)
    commits = {} if tab.run is not None else {  # a slider's release, passed on (tabs/ui_wire.py)
        c.name: gr.Textbox(visible="hidden", elem_id=f"{elem_id(tab.id, c.name)}-commit",
                           container=False)
        for c in tab.controls if isinstance(c, Slider)}
    drawn = gr.State(Drawn())
    view = gr.Textbox(visible="hidden", elem_classes=["lab-view"], container=False)
    comps = {c.name: comps[c.name] for c in tab.controls}  # in the tab's control order
    parts = TabParts(tab=tab, comps=comps, figures=figures, note=note, drawn=drawn,
                     clamped=gr.JSON(None, visible="hidden", elem_id=f"{tab.id}-clamped",
                                     container=False),
                     preset=preset, why=why, run_text=run_text, stale=stale, measured=measured,
                     commits=commits, view=view,
                     fixed={k: r.value for k, r in fixed.items()})
    controls = list(comps.values())
    quick = dict(api_visibility="private", queue=False, show_progress="hidden",
                 preprocess=False)
    link.click(_link_handler(tab), controls, [link_box], **quick)
    stepper = steppers[0] if steppers else None
    wire_set(parts, kick, reset, stepper)
    if tab.run is not None:
        build_run(tab.run, parts, present_state if present_state is not None else gr.State(False),
                   run_live, go, stop, status, run_concurrency)
    wire_api(parts)
    wire_draw(parts, present, on_open, kick)
    return BuiltTab(parts=parts, kick=kick, opens=opens, stepper=stepper)
