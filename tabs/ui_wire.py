"""A tab's events: each figure's API endpoint, the draws when the tab opens, and what moving a
control does.

Moving a slider (release: a drag let go, the arrow keys or Enter in its box, see app.py
PAGE_JS) first runs an unqueued clamp step: a typed value outside the slider's range (or its
linked maximum) is set to the nearest allowed value, visibly, with a note saying so, and the
sliders that follow it move with it. Only then do the figures redraw, all from the values now
on the page, so no figure can be drawn for a value another one refused. The figure the control
moves most draws first; the rest follow it. Figure endpoints for the API (gradio_client, raw
HTTP) are separate events with no trigger on the page: they still reject a bad value with an
error naming the parameter.
"""

# No `from __future__ import annotations` here: Gradio evaluates every event handler's type
# hints when the app is built, and string annotations made that ~0.1 s of startup.

import gradio as gr

from tabs import opening
from tabs.controls import Slider
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
LIVE = {**PRIVATE, "concurrency_limit": 1, "concurrency_id": "live"}


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


def _clamp_handler(c: Slider, source: Slider | None, followers: tuple[Slider, ...]):
    """(raw value, [source value], *followers' values, [this slider's previous value]) -> this
    slider, its followers, note[, its value for next time]. A follower at its maximum stays at
    its maximum when that maximum grows (a step slider showing the whole run keeps doing so)."""
    def handle(raw: object, *rest: object) -> list[object]:
        top = None
        if source is not None:
            top = c.max_given(source.clamp(rest[0])[0])
            rest = rest[1:]
        prev = rest[-1] if followers else None
        value, note = c.clamp(raw, top)
        out: list[object] = [gr.update(value=value)]
        for d, cur in zip(followers, rest[:len(followers)], strict=True):
            d_top = d.max_given(value)
            at_max = prev is not None and d.clamp(cur)[0] >= d.max_given(c.clamp(prev)[0])
            out.append(gr.update(maximum=d_top, value=d_top if at_max else d.clamp(cur, d_top)[0]))
        out.append(gr.update(value=note, visible=bool(note)))
        return [*out, value] if followers else out

    handle.__name__ = f"clamp_{c.name}"
    return handle


def _clamp_step(tab: TabSpec, c: Slider, comps: dict, note: gr.Markdown):
    source = tab.control(c.max_from) if c.max_from else None
    followers = tab.followers(c.name)
    last = [gr.State(c.value)] if followers else []  # this slider's value before the release
    inputs = [comps[c.name], *([comps[source.name]] if source else []),
              *(comps[d.name] for d in followers), *last]
    return comps[c.name].release(
        _clamp_handler(c, source, followers), inputs=inputs,
        outputs=[comps[c.name], *(comps[d.name] for d in followers), note, *last],
        queue=False, preprocess=False, show_progress="hidden", trigger_mode="always_last",
        api_visibility="private")


def wire_controls(tab: TabSpec, comps: dict, outputs: dict, note: gr.Markdown,
                  live: tuple | None) -> None:
    """Per control: clamp (sliders), then one event that draws the figure the control moves
    most and then the others, each shown as soon as it is drawn, then the live panel. A run
    tab's controls redraw nothing by themselves."""
    for c in tab.controls:
        start = _clamp_step(tab, c, comps, note) if isinstance(c, Slider) else None
        if tab.run is not None:
            continue
        moved = {c.name, *(d.name for d in tab.followers(c.name))}
        figs = tab.redraw_order(c.name)
        with_live = live is not None and bool(moved & set(tab.live.params))
        events: list[tuple] = []
        if figs:  # the figure the control moves most first, then the rest, in one event
            events.append((_drawers(figs, tab), [comps[p] for p in union_params(figs)],
                           [x for f in figs for x in outputs[f.name]], PRIVATE))
        if with_live:
            handler, text = live
            events.append((handler, [comps[p] for p in tab.live.params], [text], LIVE))
        prev = start
        for fn, inputs, outs, options in events:  # the live panel measures once figures are up
            if prev is not None:
                prev = prev.then(fn, inputs=inputs, outputs=outs, **options)
            else:  # a choice or a check: only a student's own change (presets set values too)
                prev = gr.on([comps[c.name].input], fn, inputs=inputs, outputs=outs, **options)
