"""Figures to the browser: the PNG data (with alt text) gr.Plot serves, a figure's API handler,
and the tab's draw handler, the one server event behind every control of a tab.

The draw handler (`TabDraw`) runs when the tab opens, when a student moves one of its controls
(a slider's release, a choice's or check's input), when a preset or Reset sets them, when a
shared link restores them and when presentation mode changes. Gradio runs it with
trigger_mode="always_last" (tabs/ui_wire.py): while one draw of a session's tab runs, further
triggers wait, and only the last of them runs after it, reading the values the page shows
then. So a session's draws of a tab never overlap and the newest values always draw last.
Each draw:
  1. clamps the page's values (tabs/clamp.py) and sets, in its first output, the sliders it
     changed, the linked maxima and the note; clears the preset selector when the controls no
     longer hold its values; marks the live panel stale when its settings moved;
  2. draws, in the tab's figure order (the figure the hero moves most first), every figure
     whose parameters or presentation mode differ from what this session's page last got,
     each shown as soon as it is drawn, from the shared render cache (tabs/render_cache.py).
What the page last got lives in the tab's gr.State (`Drawn`), per session: a page that lost
its state (a new session, a reconnect that Gradio treats as one) redraws everything.
"""

# No `from __future__ import annotations` here: Gradio evaluates every event handler's type
# hints when the app is built, and string annotations made that ~0.1 s of startup.

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

import gradio as gr
from gradio.components.plot import PlotData
from matplotlib.figure import Figure

from core.errors import ParamError
from tabs import warm
from tabs.alt import alt_text
from tabs.clamp import clamp_tab
from tabs.controls import Slider
from tabs.figure import FigureResult, lab_figure, render_png
from tabs.render_cache import Rendered, key, rendered
from tabs.spec import FigureSpec, TabSpec, run_params

log = logging.getLogger("serving_lab")


class AltPlotData(PlotData):
    """PlotData that carries the figure's alt text. Gradio's matplotlib view writes the field
    `chart` into the img's alt (followed by " plot visualising provided data", which the page's
    script drops: assets/lab.js)."""

    chart: str = ""


def plot_data(figure: Figure, alt: str = "") -> PlotData:
    """What gr.Plot(format="png") serves for a matplotlib figure, drawn by render_png under the
    lab's draw lock (gr.Plot's own savefig would draw outside it)."""
    import base64

    png = base64.b64encode(render_png(figure)).decode("ascii")
    return AltPlotData(type="matplotlib", plot=f"data:image/png;base64,{png}", chart=alt)


def served(r: Rendered) -> PlotData:
    return AltPlotData(type="matplotlib", plot=r.plot, chart=r.alt)


def served_result(fig: FigureSpec, result: FigureResult) -> PlotData:
    """A figure drawn outside the render cache (the Serve tab's streamed snapshots)."""
    return plot_data(result.figure, alt_text(fig.title, result.metrics))


def error_figure(fig: FigureSpec, err: Exception) -> Figure:
    """What a figure that failed to draw shows in its own place (the rest of the tab lives)."""
    with lab_figure(1.6) as f:
        ax = f.add_subplot()
        ax.set_axis_off()
        ax.text(0, 0.5, f"This figure could not be drawn for these settings:\n"
                f"{type(err).__name__}: {str(err)[:200]}\nThe other figures are unaffected.",
                transform=ax.transAxes, va="center", fontsize=11, color="#B00020")
        ax.set_title(fig.title, loc="left")
    return f


def failed(fig: FigureSpec, err: Exception, values: object) -> tuple[PlotData, str]:
    log.exception("figure %s failed for %s", fig.name, values)
    alt = f"{fig.title}. Not drawn: {type(err).__name__}."
    return plot_data(error_figure(fig, err), alt), f"**Not drawn:** {type(err).__name__}: {err}"


def api_handler(fig: FigureSpec, tab: TabSpec):
    """The figure's API endpoint: (plot, metrics table); a bad value is a gr.Error naming it.
    API calls draw as the baselines pin (presentation mode is the page's)."""
    def handle(*values: object):
        params = dict(zip(fig.params, values, strict=True))
        try:
            r = rendered(fig, tab, params)
        except ParamError as e:
            raise gr.Error(str(e)) from None
        except Exception as e:  # a bug in one figure must not take the tab down
            return failed(fig, e, values)
        return served(r), r.table

    handle.__name__ = fig.name
    return handle


def title_markdown(fig: FigureSpec, stale: str = "", computing: str = "") -> str:
    """The figure's heading; while the figure is stale, a visible line saying so and why; while
    it waits for the warm-up's sweep (tabs/warm.py), a line saying what is being computed."""
    head = f"#### {fig.title}"
    if stale:
        return (f"{head}\n\n<span class='stale-note'>⚠ Stale: this figure still shows the "
                f"previous settings; it could not be redrawn ({stale}).</span>")
    if computing:
        return (f"{head}\n\n<span class='computing-note'>Computing {computing}, once for "
                f"this server: the figure appears in a few seconds.</span>")
    return head


@dataclass(frozen=True, slots=True, kw_only=True)
class Drawn:
    """What a session's page shows of one tab: the values it last drew for, and per figure the
    render-cache key its image was drawn for."""

    values: dict[str, object] | None = None
    figures: dict[str, tuple] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class TabParts:
    """A built tab's components that its draw reads and sets."""

    tab: TabSpec
    comps: dict[str, gr.components.Component]  # in control order
    figures: dict[str, tuple[gr.Plot, gr.Markdown, gr.Markdown]]  # plot, metrics, title
    note: gr.Markdown  # the clamp note under the controls
    drawn: gr.State  # Drawn
    preset: gr.Dropdown | None = None
    why: gr.Markdown | None = None
    run_text: gr.Markdown | None = None
    stale: gr.Markdown | None = None  # the live panel's "the controls moved" note
    measured: gr.State | None = None  # the values the live panel was measured for

    def inputs(self, present: gr.Checkbox) -> list:
        extra = [self.preset, self.measured]
        return [*self.comps.values(), present, self.drawn, *(c for c in extra if c is not None)]

    def outputs(self) -> list:
        extra = [self.preset, self.why, self.run_text, self.stale]
        return [*self.comps.values(), *(x for f in self.figures.values() for x in f),
                self.note, self.drawn, *(c for c in extra if c is not None)]


def tab_draw(parts: TabParts):
    """The tab's draw handler (module docstring): a generator of {component: update} dicts."""
    tab = parts.tab
    names = list(parts.comps)
    by_name = {p.name: p for p in tab.presets}

    def handle(*inputs: object) -> Iterator[dict]:
        raw = dict(zip(names, inputs, strict=False))
        present, drawn, *extra = inputs[len(names):]
        preset_name = extra.pop(0) if parts.preset is not None else None
        measured = extra.pop(0) if parts.measured is not None else None
        last = drawn if isinstance(drawn, Drawn) else Drawn()
        c = clamp_tab(tab, raw, last.values)
        first: dict = {parts.note: gr.update(value=c.note, visible=bool(c.note))}
        for name in c.changed | set(c.maxima):
            ctl = tab.control(name)
            up = {"value": c.values[name]}
            if isinstance(ctl, Slider) and name in c.maxima:
                up["maximum"] = c.maxima[name]
            first[parts.comps[name]] = gr.update(**up)
        if parts.preset is not None and isinstance(preset_name, str):
            chosen = by_name.get(preset_name)
            if chosen is None or any(c.values[k] != v for k, v in chosen.values.items()) or any(
                    c.values[x.name] != x.value for x in tab.controls
                    if x.name not in chosen.values):
                first[parts.preset] = gr.update(value=None)
                first[parts.why] = ""
        if parts.stale is not None and tab.live is not None:
            moved = isinstance(measured, dict) and any(
                measured.get(p) != c.values[p] for p in tab.live.params)
            first[parts.stale] = gr.update(visible=moved)
        now = Drawn(values=dict(c.values), figures=dict(last.figures))
        if tab.run is not None and parts.run_text is not None:
            params = run_params(tab, c.values)
            if last.values is None or run_params(tab, last.values) != params:
                first[parts.run_text] = tab.run.text(tab.run.final(**params))
        first[parts.drawn] = now
        yield first
        # Every later output repeats the images already drawn: Gradio streams a generator's
        # outputs as diffs against its previous output, and its page applies a diff in place,
        # to the very object the plot shows, so a plot going back to "no change" would have its
        # image deleted from under it (seen in chromium when cached figures came fast).
        shown: dict = {}
        for fig in tab.figures:
            k = key(fig, {p: c.values[p] for p in fig.params}, bool(present))
            if last.figures.get(fig.name) == k:
                continue
            plot, table, title = parts.figures[fig.name]
            slow = warm.waiting(fig.name)
            if slow is not None:  # the warm-up's sweep: say why it takes seconds
                yield {**shown, title: title_markdown(fig, computing=slow.what)}
            try:
                r = rendered(fig, tab, c.values, bool(present))
            except ParamError as e:  # cannot happen after the clamp; never a crash if it does
                shown[title] = title_markdown(fig, str(e))
                yield dict(shown)
                continue
            except Exception as e:  # a bug in one figure must not take the tab down
                img, text = failed(fig, e, c.values)
                shown |= {plot: img, table: text, title: title_markdown(fig)}
                yield dict(shown)
                continue
            now = Drawn(values=now.values, figures={**now.figures, fig.name: k})
            shown |= {plot: served(r), table: r.table, title: title_markdown(fig)}
            yield {**shown, parts.drawn: now}

    handle.__name__ = f"{tab.id}_draw"
    return handle
