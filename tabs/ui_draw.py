"""Figures to the browser: PNG data for gr.Plot, a figure's handler (its error drawn in its own
place), every figure of a tab at once, and the control updates that set a tab's values."""

from __future__ import annotations

import base64
import logging

import gradio as gr
from gradio.components.plot import PlotData
from matplotlib.figure import Figure

from core.errors import ParamError
from tabs.controls import Slider
from tabs.figure import lab_figure, render_png
from tabs.metrics import to_markdown
from tabs.spec import FigureSpec, TabSpec, render

log = logging.getLogger("serving_lab")


def plot_data(figure: Figure) -> PlotData:
    """What gr.Plot(format="png") serves for a matplotlib figure, drawn by render_png under the
    lab's draw lock (gr.Plot's own savefig would draw outside it)."""
    png = base64.b64encode(render_png(figure)).decode("ascii")
    return PlotData(type="matplotlib", plot=f"data:image/png;base64,{png}")


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


def _handler(fig: FigureSpec, tab: TabSpec):
    def handle(*values: object):
        try:
            result = render(fig, tab, dict(zip(fig.params, values, strict=True)))
        except ParamError as e:
            raise gr.Error(str(e)) from None
        except Exception as e:  # a bug in one figure must not take the tab down
            log.exception("figure %s failed for %s", fig.name, values)
            return plot_data(error_figure(fig, e)), f"**Not drawn:** {type(e).__name__}: {e}"
        return plot_data(result.figure), to_markdown(result.metrics)

    handle.__name__ = fig.name
    return handle


def draw_all(tab: TabSpec, values: dict[str, object]) -> list[object]:
    """Plot and table of every figure of tab for values (validated here), in figure order."""
    out: list[object] = []
    for fig in tab.figures:
        out += list(_handler(fig, tab)(*[values[p] for p in fig.params]))
    return out


def control_updates(tab: TabSpec, values: dict[str, object], only: set[str] | None = None
                    ) -> list[object]:
    """gr.update per control setting values (a linked slider's maximum follows its source);
    controls outside `only` are skipped."""
    return [gr.skip() if only is not None and c.name not in only
            else gr.update(value=values[c.name], maximum=c.max_given(values[c.max_from]))
            if isinstance(c, Slider) and c.max_from else gr.update(value=values[c.name])
            for c in tab.controls]
