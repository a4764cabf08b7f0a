"""The figure contract: pure functions params -> FigureResult(figure, metrics), in the lab style."""

from __future__ import annotations

import gc
import io
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import matplotlib.style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

STYLE_PATH = Path(__file__).resolve().parent.parent / "assets" / "lab.mplstyle"
DPI = 100
WIDTH_IN = 10.0

MetricValue = int | float | str | bool

# NOTE: the style is applied once, process-wide, and never changed afterwards. A per-figure
# style.context is an rc_context on the one global rcParams: two Gradio worker threads entering
# and leaving it concurrently restored each other's values and leaked the style (tick density
# then depended on request order; tests/figures/test_contract.py pins this). Agg also reads some
# rcParams at draw time, which happens later, in gr.Plot's postprocess, outside any context.
matplotlib.style.use(["default", str(STYLE_PATH)])


@dataclass(frozen=True)
class FigureResult:
    """A rendered figure plus the numbers it shows (the metrics table and golden JSON)."""

    figure: Figure
    metrics: Mapping[str, MetricValue]


# NOTE: matplotlib is thread-safe per Figure only: its mathtext parser (log-axis tick labels)
# is a shared object that raised ParseException when two threads laid out figures at once.
# Every figure build and every savefig therefore holds this lock; the app serves PNG bytes made
# by render_png (tabs/ui.py), so gr.Plot never draws a figure itself.
DRAW_LOCK = threading.RLock()


@contextmanager
def lab_figure(height_in: float, width_in: float = WIDTH_IN) -> Iterator[Figure]:
    """Yield a new Figure with constrained layout, built under DRAW_LOCK. On exit the layout is
    solved once and then frozen (the engine dropped), so a later savefig only draws."""
    with DRAW_LOCK:
        fig = Figure(figsize=(width_in, height_in), dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        yield fig
        engine = fig.get_layout_engine()
        if engine is not None:
            engine.execute(fig)
        fig.set_layout_engine(None)  # even a "none" placeholder would make savefig lay out again


def render_png(fig: Figure) -> bytes:
    """PNG bytes as gr.Plot(format="png") would make them (figure dpi, no bbox_inches)."""
    with DRAW_LOCK, io.BytesIO() as buf:
        fig.savefig(buf, format="png")
        return buf.getvalue()


def freeze_heap() -> None:
    """Move everything alive now (torch, gradio, the default figures) out of the cyclic GC's
    reach. Without it, full collections over that heap added ~140 ms to one redraw in three
    (P95 ~1.5x P50 in `python -m tabs.redraw_bench`)."""
    gc.collect()
    gc.freeze()


def snap_layout(fig: Figure) -> None:
    """Round every axes position to 1e-6 of the figure (a thousandth of a pixel).

    NOTE: the constrained-layout solve can differ in the last bit between runs of the same
    figure (kiwisolver's internal ordering), which occasionally moves one antialiased pixel;
    rounding after the solve makes the PNG bytes reproducible.
    """
    for ax in fig.axes:
        x0, y0, w, h = ax.get_position().bounds
        ax.set_position([round(x0, 6), round(y0, 6), round(w, 6), round(h, 6)])
