"""A tab's events: each figure's API endpoint, and the clamp and draw events behind every control.

The draw event (tabs/ui_draw.py tab_draw) has every way a tab's figures can need drawing as its
triggers: the tab's select (a student opens it), its hidden kick number's change (a preset,
Reset, a shared link or presentation mode set values: tabs/ui.py, tabs/shell.py), every
slider's release (a drag let go, the arrow keys or Enter in its box: assets/lab_head.html) and every
choice's and check's input. One event, trigger_mode="always_last": Gradio's page runs a
session's draws of one tab one at a time, and of the triggers that arrive while one runs it
keeps only the last, run when that one ends, with the values the page shows then. That is
what "the newest values win" needs, with no bookkeeping of ours. The clamp events
(tabs/ui_draw.py tab_clamp), one per control so that each sets only the controls its move can
change, unqueued (they answer in milliseconds), listen to another event of the control than the
draw (CLAMP_EVENT says why); a slider's commit clamp listens to its release, passed on through a
hidden box, and one more clamp to the tab's open (a kick leaves nothing to clamp:
tabs/ui_set.py). A run tab (Serve) redraws on its select and kick only: its controls wait for
the Generate button.

Concurrency limits are process-wide: DRAWS_PER_TAB draws of one tab run at once for the whole
class, each tab its own group so a slow tab never holds up another, and API_CALLS figure calls;
the CPU is bounded by the render cache's own slots (tabs/render_cache.py RENDER_SLOTS), which a
hit never waits for: the limits here only bound the worker threads, high enough that a class's
hits do not queue behind one render. API endpoints (gradio_client, raw HTTP: one per figure, no page
trigger) reject a bad value with an error naming the parameter.
"""

# No `from __future__ import annotations` here: Gradio evaluates every event handler's type
# hints when the app is built, and string annotations made that ~0.1 s of startup.

import gradio as gr

from tabs.controls import Check, Choice, Slider, elem_id
from tabs.ui_draw import TabParts, api_handler, follows, tab_clamp, tab_draw

DRAWS_PER_TAB = 8
API_CALLS = 16
API = dict(trigger_mode="always_last", show_progress="minimal", concurrency_limit=API_CALLS,
           concurrency_id="api",
           preprocess=False)  # raw values: our validation names the parameter and its range


def wire_api(parts: TabParts) -> None:
    """Each figure's API endpoint (plot, table), with no trigger on the page."""
    for fig in parts.tab.figures:
        plot, table, _ = parts.figures[fig.name]
        gr.on([], api_handler(fig, parts.tab), inputs=[parts.comps[p] for p in fig.params],
              outputs=[plot, table], api_name=fig.name, **API)


# A control's move, as the event its draw listens to and as the one its clamp listens to. Gradio's
# page sends the events of one trigger one after the other, each awaited to its end: the draw,
# registered first, held a clamp on its own trigger until its figures had all streamed, and a
# clamp registered first put its round trip before the draw (+50 ms release to figure, measured
# by tabs/release_bench.py). So a move's clamp listens to another event (a slider's every step,
# a choice's or check's change) and sets only the sliders that follow the moved control. The
# slider's own value, which a student may be typing at any step, is set by its commit clamp
# (tabs/ui_draw.py TabParts.clamp_outputs) once the slider is released: in the browser, before
# the draw, the release passes the box's value and the time (PASS_ON) to the slider's hidden
# commit box, and the clamp runs on that box's change, a trigger of its own that waits for no
# other event. The value is the box's as the student left it, kept by the page before Gradio's
# slider clamps it to its range on blur: the note names what was typed
# (tests/e2e/test_controls.py).
# A choice's or check's clamp listens to its `select`, which only a student's click fires: its
# `change` fires too when a preset or Reset sets it, in the middle of the page applying that
# answer, and the clamp then read a page half set (the choice new, the other controls and the
# clamp record old) and cleared the preset it was applying (routing "A small cache" after "The
# prior instead of a window": the preset menu went blank; tests/e2e/test_lecturer_route.py).
DRAW_EVENT = {Slider: "release", Choice: "input", Check: "input"}
CLAMP_EVENT = {Slider: "input", Choice: "select", Check: "select"}
# the box's value as the student left it (assets/lab_head.html), and the time: new each time,
# so the commit box's change fires
PASS_ON = "(v) => JSON.stringify([window.lab.left('{id}', v), performance.now()])"


def control_triggers(parts: TabParts, events: dict = DRAW_EVENT) -> dict[str, object]:
    """Each control's move, as `events` names it (but on a run tab, whose controls wait for its
    button)."""
    if parts.tab.run is not None:
        return {}
    return {c.name: getattr(parts.comps[c.name], events[type(c)])
            for c in parts.tab.controls if type(c) in events}


def clamp_triggers(parts: TabParts) -> dict[str, object]:
    """Each control's move as its clamp listens to it (CLAMP_EVENT); a slider's only when
    other sliders follow it: its commit sets everything else its steps could."""
    return {name: trigger for name, trigger in control_triggers(parts, CLAMP_EVENT).items()
            if name not in parts.commits or follows(parts.tab, name) != [name]}


def wire_draw(parts: TabParts, present: gr.Checkbox, opened: list, kick: gr.Number):
    """The clamp events (one per control, one for the tab's open) and the draw event
    on all of their triggers (tabs/ui_draw.py)."""
    moves = control_triggers(parts)
    # progress on the note only: an event's progress targets (its outputs, unless
    # show_progress_on names others) get their loading state refreshed as it runs, and a slider
    # so refreshed put back a value its page's store still lagged behind (tabs/ui_draw.py)
    clamp = dict(trigger_mode="always_last", queue=False, show_progress="hidden",
                 show_progress_on=[parts.note], preprocess=False, api_visibility="private")
    gr.on([*opened], tab_clamp(parts, None), inputs=parts.clamp_inputs(),
          outputs=parts.clamp_outputs(None), **clamp)
    for name, trigger in clamp_triggers(parts).items():
        gr.on([trigger], tab_clamp(parts, name), inputs=parts.clamp_inputs(),
              outputs=parts.clamp_outputs(name), **clamp)
    for name, commit in parts.commits.items():
        pass_on = PASS_ON.replace("{id}", elem_id(parts.tab.id, name))
        gr.on([parts.comps[name].release], None, [parts.comps[name]], [commit], js=pass_on,
              queue=False, show_progress="hidden", api_visibility="private")
        gr.on([commit.change], tab_clamp(parts, name, commit=True),
              inputs=[*parts.clamp_inputs(), commit],
              outputs=parts.clamp_outputs(name, commit=True), **clamp)
    return gr.on([*opened, kick.change, *moves.values()], tab_draw(parts),
                 inputs=parts.draw_inputs(present), outputs=parts.draw_outputs(),
                 trigger_mode="always_last",
                 concurrency_id=f"draw-{parts.tab.id}", concurrency_limit=DRAWS_PER_TAB,
                 show_progress="minimal",
                 show_progress_on=[p for p, _, _ in parts.figures.values()],
                 preprocess=False, api_visibility="private")
