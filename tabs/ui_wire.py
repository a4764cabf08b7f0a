"""A tab's events: each figure's API endpoint, the draws when the tab opens, and what moving a
control does.

Moving a slider (release: a drag let go, the arrow keys or Enter in its box, see app.py
PAGE_JS) first runs the clamp step, in the browser (tabs/clamp.py): a typed value outside the
slider's range (or its linked maximum) is set to the nearest allowed value, visibly, with a
note saying so, and the sliders that follow it move with it. Only then do the figures redraw,
all from the values now on the page, so no figure can be drawn for a value another one
refused. The figure the control moves most draws first; the rest follow it. Figure endpoints
for the API (gradio_client, raw HTTP) are separate events with no trigger on the page: they
still reject a bad value with an error naming the parameter.
"""

# No `from __future__ import annotations` here: Gradio evaluates every event handler's type
# hints when the app is built, and string annotations made that ~0.1 s of startup.

import gradio as gr

from tabs import opening
from tabs.clamp import clamp_js
from tabs.controls import Slider, elem_id
from tabs.spec import TabSpec
from tabs.ui_draw import _drawers, _handler, union_params

OPTIONS = dict(
    trigger_mode="always_last",
    show_progress="minimal",
    concurrency_limit=2,
    concurrency_id="figures",
    preprocess=False,  # raw values: our validation names the parameter and its range
)
PRIVATE = dict(api_visibility="private", **OPTIONS)


def wire_figures(tab: TabSpec, comps: dict, outputs: dict, on_open: list) -> None:
    """Each figure's API endpoint (plot, table; no page trigger) and the tab's draw on open
    (one event filling in figure by figure)."""
    for fig in tab.figures:
        inputs = [comps[p] for p in fig.params]
        plot, table, _ = outputs[fig.name]
        gr.on([], _handler(fig, tab), inputs=inputs, outputs=[plot, table], api_name=fig.name,
              **OPTIONS)
    if on_open:
        _on_figures(on_open, tab.figures, tab, comps, outputs)


def _on_figures(triggers: list, figs: tuple, tab: TabSpec, comps: dict, outputs: dict):
    """One private event drawing figs in order (each shown as soon as it is drawn), unless the
    page load is drawing this tab for a shared link (tabs/opening.py)."""
    draw = _drawers(figs, tab)

    def opened(request: gr.Request | None, *values: object):
        if opening.select_skips(request, tab.id):
            yield [gr.skip()] * (3 * len(figs))
            return
        yield from draw(request, *values)

    opened.__name__ = f"{tab.id}_opened"
    return gr.on(triggers, opened, inputs=[comps[p] for p in union_params(figs)],
                 outputs=[x for f in figs for x in outputs[f.name]], **PRIVATE)


def _clamp_step(tab: TabSpec, c: Slider, comps: dict, note: gr.Markdown):
    """The slider's release: the clamp (tabs/clamp.py), in the browser."""
    source = tab.control(c.max_from) if c.max_from else None
    followers = tab.followers(c.name)
    inputs = [comps[c.name], *([comps[source.name]] if source else []),
              *(comps[d.name] for d in followers)]
    js = clamp_js(c, source, followers, tuple(elem_id(tab.id, d.name) for d in followers))
    return comps[c.name].release(
        None, inputs=inputs, outputs=[comps[c.name], *(comps[d.name] for d in followers), note],
        js=js, queue=False, show_progress="hidden", trigger_mode="always_last",
        api_visibility="private")


def wire_controls(tab: TabSpec, comps: dict, outputs: dict, note: gr.Markdown) -> None:
    """Per control: clamp (sliders), then one event that draws the figure the control moves
    most and then the others, each shown as soon as it is drawn. A run tab's controls redraw
    nothing by themselves; no control measures the live panel (its button does)."""
    for c in tab.controls:
        start = _clamp_step(tab, c, comps, note) if isinstance(c, Slider) else None
        figs = tab.redraw_order(c.name)
        if tab.run is not None or not figs:
            continue
        draw = _drawers(figs, tab)  # the figure the control moves most first, then the rest
        inputs = [comps[p] for p in union_params(figs)]
        outs = [x for f in figs for x in outputs[f.name]]
        if start is not None:
            start.then(draw, inputs=inputs, outputs=outs, **PRIVATE)
        else:  # a choice or a check: only a student's own change (presets set values too)
            gr.on([comps[c.name].input], draw, inputs=inputs, outputs=outs, **PRIVATE)
