"""The Serve tab's streamed run: Generate streams snapshots of a run into the page (text with
every snapshot, figures under a redraw rule for the whole server: tabs/stream_draws.py), Stop
cancels it.
RUN_CONCURRENCY / CLASS_CONCURRENCY: how many streamed runs the server serves at once."""

# No `from __future__ import annotations` here (tabs/ui.py says why).

import time

import gradio as gr
from gradio.data_classes import GradioModel, GradioRootModel

from core.errors import ParamError
from tabs.figure import presenting
from tabs.metrics import to_markdown
from tabs.run_line import RunLine
from tabs.spec import RunSpec, TabSpec, run_params
from tabs.stream_draws import StreamDraws
from tabs.ui_draw import TabParts, served_result

RUN_CONCURRENCY = 2  # streamed runs at once, each with its own engine
CLASS_CONCURRENCY = 128  # with a class engine: every seat's stream waits on the same batch

# While a run streams, its text goes out with its snapshots, at most every TEXT_EVERY_S for a
# lone page and less often when many generate (all pages together at most TEXT_RATE updates a
# second), and with the last byte; its figures redraw under DRAWS's rule (tabs/stream_draws.py:
# one draw at a time for the whole server, all pages' drawing within 1 / REDRAW_SHARE of the
# wall time) and once at the end, after the last text.
REDRAW_SHARE = 10
TEXT_EVERY_S = 0.1
TEXT_RATE = 40.0
DRAWS = StreamDraws(REDRAW_SHARE, text_floor_s=TEXT_EVERY_S, text_rate=TEXT_RATE)


def ready(comp: gr.components.Component, value: object) -> object:
    """value as the page receives it: the component's own postprocess, run here because the
    run event turns Gradio's off (postprocess=False). Gradio's runs every output of every
    streamed update in a worker thread of its own: 2.0 ms an update with figures, against 0.1 ms
    this way (measured on the Serve tab's outputs); an update dict (gr.skip()) passes as it is."""
    if isinstance(value, dict) and value.get("__type__") == "update":
        return value
    out = comp.postprocess(value)
    return out.model_dump() if isinstance(out, GradioModel | GradioRootModel) else out


def run_handler(run: RunSpec, tab: TabSpec, outputs: list, line: RunLine):
    """Streams `outputs` (session, status, text, plot and table per figure, live panel,
    result): the text and the result with every snapshot, the figures as the rule above
    allows; each value postprocessed here (ready), sent as {component: value}."""
    def as_sent(values: list[object]) -> dict[object, object]:
        """values in the order of `outputs` -> the update Gradio reads (one place zips them)."""
        return {outputs[0]: values[0],
                **{c: ready(c, v) for c, v in zip(outputs[1:], values[1:], strict=True)}}

    def draw(snap: object, present: bool) -> list[object]:
        out: list[object] = []
        for fig in tab.figures:
            with presenting(present):  # per snapshot: the generator may resume elsewhere
                result = run.draws[fig.name](snap)
                out += [served_result(fig, result), to_markdown(result.metrics)]
        return out

    def handle(request: gr.Request, session: object, present: bool, *values: object):
        page = request.session_hash or ""
        line.start(page)
        try:
            yield from stream(session, present, *values)
        finally:
            line.end()

    def stream(session: object, present: bool, *values: object):
        try:
            params = run_params(tab, dict(zip(run.params, values, strict=True)))
            if session is None:
                session = run.session()
            snapshots = run.start(session, **params)
        except ParamError as e:
            raise gr.Error(str(e)) from None
        except RuntimeError as e:  # the class engine is busy, or this page already has a run
            raise gr.Error(str(e)) from None
        figures: list[object] = [gr.skip()] * (2 * len(tab.figures))
        start, sent, drawing = time.perf_counter(), 0.0, 0.0
        status: str | dict = "generating…"  # sent once: a cancelled run's last output is sent
        DRAWS.started()                       # again as it ends, and must not undo "stopped"
        generating = True
        try:
            for snap in snapshots:
                now = time.perf_counter()
                if not snap.done and now - sent < DRAWS.text_every():
                    continue
                sent = now
                # the figures drawn last are sent again, unchanged: Gradio's page applies a
                # streamed output as a diff, and "no change" would delete the image (ui_draw.py)
                text = [run.text(snap), *figures, run.live(snap), run.result(snap)]
                yield as_sent([session, "drawing the figures…" if snap.done else status, *text])
                status = gr.skip()
                if snap.done:
                    DRAWS.finished()
                    generating = False
                    DRAWS.wait_turn()
                elif not DRAWS.allowed(tab.id, drawing, now - start):
                    continue
                t0 = time.perf_counter()
                try:
                    figures = draw(snap, bool(present))
                finally:
                    took = time.perf_counter() - t0
                    DRAWS.drew(tab.id, took)
                drawing += took
                yield as_sent([session, "done" if snap.done else gr.skip(), run.text(snap),
                               *figures, run.live(snap), run.result(snap)])
        finally:
            if generating:
                DRAWS.finished()
            DRAWS.closed()

    handle.__name__ = run.name
    return handle


def build_run(run: RunSpec, parts: TabParts, present: gr.State, live: gr.Markdown,
               go: gr.Button, stop: gr.Button, status: gr.Markdown, concurrency: int) -> None:
    """Generate streams snapshots into the status, text, figures, live panel and the result
    (a JSON output: API clients get the generated bytes themselves); Stop cancels it (the
    engine retires the request as the generator closes) and says so at once. State is per
    browser session."""
    state = gr.State(None, time_to_live=900, delete_callback=run.close)
    line = RunLine(concurrency)  # the pages waiting for a run (tabs/run_line.py)

    def joining(request: gr.Request) -> dict:
        """Generate's first answer, at once: the last run's text goes, and a line says whether
        this run starts now or waits (tabs/run_line.py), or, in class mode, what the room's
        engine is doing (run.waiting)."""
        room = run.waiting() if run.waiting is not None else None
        said = room if room is not None else line.join(request.session_hash or "").markdown()
        return {parts.run_text: said, status: ""}

    go.click(joining, None, [parts.run_text, status], queue=False, show_progress="hidden",
             api_visibility="private")
    flat = [x for f in parts.tab.figures for x in parts.figures[f.name][:2]]
    result = gr.JSON(visible=False, label="result")
    outputs = [state, status, parts.run_text, *flat, live, result]
    event = go.click(run_handler(run, parts.tab, outputs, line),
                     inputs=[state, present, *[parts.comps[p] for p in run.params]],
                     outputs=outputs,
                     api_name=run.name, concurrency_limit=concurrency, concurrency_id="run",
                     show_progress="minimal", show_progress_on=[parts.run_text],
                     preprocess=False, postprocess=False)

    def stopped(request: gr.Request) -> str:
        line.leave(request.session_hash or "")
        return "stopped"

    stop.click(None, None, None, cancels=[event], api_visibility="private", queue=False,
               show_progress="hidden").then(
        stopped, None, [status], api_visibility="private", queue=False, show_progress="hidden")
