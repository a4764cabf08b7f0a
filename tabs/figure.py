"""The figure contract: pure functions params -> FigureResult(figure, metrics), in the lab style."""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import matplotlib.style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

STYLE_PATH = Path(__file__).resolve().parent.parent / "assets" / "lab.mplstyle"
DPI = 100
WIDTH_IN = 10.0

MetricValue = int | float | str | bool


@dataclass(frozen=True)
class FigureResult:
    """A rendered figure plus the numbers it shows (the metrics table and golden JSON)."""

    figure: Figure
    metrics: Mapping[str, MetricValue]


@contextmanager
def lab_figure(height_in: float, width_in: float = WIDTH_IN) -> Iterator[Figure]:
    """Yield a new Figure built under the lab style; on exit the figure is drawn once so
    that every artist (ticks included) takes its style now, not from global rcParams later."""
    with matplotlib.style.context(str(STYLE_PATH)):
        fig = Figure(figsize=(width_in, height_in), dpi=DPI)
        FigureCanvasAgg(fig)
        yield fig
        fig.canvas.draw()


def render_png(fig: Figure) -> bytes:
    """PNG bytes exactly as gr.Plot(format="png") serves them (figure dpi, no bbox_inches)."""
    with io.BytesIO() as buf:
        fig.savefig(buf, format="png")
        return buf.getvalue()
