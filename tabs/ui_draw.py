"""Figures to the browser: PNG data (with alt text) for gr.Plot, a figure's API handler and its
page handler (an error drawn in its own place, a figure left stale says so), every figure of a
tab at once, and the control updates that set a tab's values."""

# No `from __future__ import annotations` here: Gradio evaluates every event handler's type
# hints when the app is built, and string annotations made that ~0.1 s of startup.

import base64
import logging
from functools import partial

import gradio as gr
from gradio.components.plot import PlotData
from matplotlib.figure import Figure

from core.errors import ParamError
from tabs import newest, warm
from tabs.alt import alt_text
from tabs.controls import Slider
from tabs.figure import FigureResult, lab_figure, render_png
from tabs.metrics import to_markdown
from tabs.present import drawing
from tabs.spec import FigureSpec, TabSpec, render

log = logging.getLogger("serving_lab")


class AltPlotData(PlotData):
    """PlotData that carries the figure's alt text. Gradio's matplotlib view writes the field
    `chart` into the img's alt (followed by " plot visualising provided data", which the page's
    script drops: app.py PAGE_JS)."""

    chart: str = ""


def plot_data(figure: Figure, alt: str = "") -> PlotData:
    """What gr.Plot(format="png") serves for a matplotlib figure, drawn by render_png under the
    lab's draw lock (gr.Plot's own savefig would draw outside it)."""
    png = base64.b64encode(render_png(figure)).decode("ascii")
    return AltPlotData(type="matplotlib", plot=f"data:image/png;base64,{png}", chart=alt)


def served(fig: FigureSpec, result: FigureResult) -> PlotData:
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


def _failed(fig: FigureSpec, err: Exception, values: tuple) -> tuple[PlotData, str]:
    log.exception("figure %s failed for %s", fig.name, values)
    alt = f"{fig.title}. Not drawn: {type(err).__name__}."
    return plot_data(error_figure(fig, err), alt), f"**Not drawn:** {type(err).__name__}: {err}"


def _handler(fig: FigureSpec, tab: TabSpec):
    """The figure's API endpoint: (plot, metrics table); a bad value is a gr.Error naming it.
    API calls draw as the baselines pin (presentation mode is the page's, per session)."""
    def handle(*values: object):
        try:
            result = render(fig, tab, dict(zip(fig.params, values, strict=True)))
        except ParamError as e:
            raise gr.Error(str(e)) from None
        except Exception as e:  # a bug in one figure must not take the tab down
            return _failed(fig, e, values)
        return served(fig, result), to_markdown(result.metrics)

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


def _drawer(fig: FigureSpec, tab: TabSpec):
    """The figure's page handler: (plot, table, title). Never raises: the page's one message
    about a bad value comes from its clamp step (tabs/ui_wire.py); a figure that cannot be
    redrawn for a value keeps its image and says in its title that it is stale."""
    def handle(request: gr.Request | None, *values: object):
        try:
            with drawing(request):
                result = render(fig, tab, dict(zip(fig.params, values, strict=True)))
        except ParamError as e:
            return gr.skip(), gr.skip(), title_markdown(fig, str(e))
        except Exception as e:
            return (*_failed(fig, e, values), title_markdown(fig))
        return served(fig, result), to_markdown(result.metrics), title_markdown(fig)

    handle.__name__ = f"{fig.name}_page"
    return handle


def _drawers(figs: tuple[FigureSpec, ...], tab: TabSpec):
    """Several figures' page handler, one event: (request, *values of `union_params(figs)`)
    yields (plot, table, title) per figure, each figure's as soon as it is drawn and
    gr.skip() for the others, so the page fills in figure by figure. One event instead of one
    per figure keeps the app's event count (and its build time) down; the figures draw one
    after another, as they would anyway under the draw lock. A figure a newer draw of this
    session has claimed since this one started is left to it (tabs/newest.py)."""
    names = union_params(figs)
    one = [_drawer(f, tab) for f in figs]

    def handle(request: gr.Request | None, *values: object):
        by_name = dict(zip(names, values, strict=True))
        tickets = newest.take(request, [f.name for f in figs])
        yielded = False
        for i, (fig, draw) in enumerate(zip(figs, one, strict=True)):
            slow = warm.waiting(fig.name)
            if slow is not None and tickets.current(fig.name):  # the warm-up's sweep: say why
                note: list[object] = [gr.skip()] * (3 * len(figs))
                note[3 * i + 2] = title_markdown(fig, computing=slow.what)
                yielded = True
                yield note
            drawn = tickets.draw(fig.name, partial(draw, request,
                                                   *[by_name[p] for p in fig.params]))
            if drawn is not None:
                out: list[object] = [gr.skip()] * (3 * len(figs))
                out[3 * i: 3 * i + 3] = drawn
                yielded = True
                yield out
        if not yielded:  # a generator that yields nothing would blank its outputs
            yield [gr.skip()] * (3 * len(figs))

    handle.__name__ = f"{figs[0].name}_and_{len(figs) - 1}_more_page"
    return handle


def union_params(figs: tuple[FigureSpec, ...]) -> tuple[str, ...]:
    """Every parameter of figs, once each, in first-seen order."""
    return tuple(dict.fromkeys(p for f in figs for p in f.params))


def draw_all(tab: TabSpec, values: dict[str, object],
             request: gr.Request | None = None) -> list[object]:
    """Plot, table and title of every figure of tab for values, in figure order (skips for a
    figure a newer draw of this session has claimed meanwhile: tabs/newest.py)."""
    tickets = newest.take(request, [f.name for f in tab.figures])
    out: list[object] = []
    for fig in tab.figures:
        drawn = tickets.draw(fig.name, partial(_drawer(fig, tab), request,
                                               *[values[p] for p in fig.params]))
        out += list(drawn) if drawn is not None else [gr.skip()] * 3
    return out


def control_updates(tab: TabSpec, values: dict[str, object], only: set[str] | None = None
                    ) -> list[object]:
    """gr.update per control setting values (a linked slider's maximum follows its source);
    controls outside `only` are skipped."""
    return [gr.skip() if only is not None and c.name not in only
            else gr.update(value=values[c.name], maximum=c.max_given(values[c.max_from]))
            if isinstance(c, Slider) and c.max_from else gr.update(value=values[c.name])
            for c in tab.controls]
