"""The figure contract: pure functions params -> FigureResult(figure, metrics), in the lab style."""

from __future__ import annotations

import gc
import io
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import matplotlib.style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tabs.projector import (
    PLAIN,
    PRESENT_SCALE,
    Arrangement,
    Projector,
    arranged_by,
    brief,
    finish,
    is_presenting,
    presenting,
    restyle,
    shorten,
)

# Presentation mode lives in tabs/projector.py; figure modules import it from here.
__all__ = ["PRESENT_SCALE", "Arrangement", "Projector", "arranged_by", "brief", "is_presenting",
           "presenting", "shorten"]

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


def _present_size(width_in: float, height_in: float) -> tuple[float, float]:
    """Inches at DPI * PRESENT_SCALE with the pixels the size has at DPI. The canvas is
    int(inches * dpi + 1e-8) pixels (FigureCanvasBase.get_width_height), and px / dpi inches
    come back within a few ulps of px, so the count is the same."""
    dpi = DPI * PRESENT_SCALE
    return int(width_in * DPI + 1e-8) / dpi, int(height_in * DPI + 1e-8) / dpi


@contextmanager
def lab_figure(height_in: float, width_in: float = WIDTH_IN, *, look: Projector = PLAIN,
               fixed: bool = False, place: Callable[[Figure], None] | None = None
               ) -> Iterator[Figure]:
    """Yield a new Figure with constrained layout, built under DRAW_LOCK. On exit the layout is
    solved once and then frozen (the engine dropped), so a later savefig only draws.

    Normal mode: with `fixed` the figure has no layout engine and places its panels itself
    (grid margins, or `place(fig)` on exit), where constrained layout would put them, for
    speed. Under presenting(), the same pixels hold projector-sized text (PRESENT_SCALE), every
    figure is laid out by constrained layout, and tabs/projector.py restyles it with what
    `look` declares (words, legend placement)."""
    present = is_presenting()
    with DRAW_LOCK:
        if present:
            size = _present_size(width_in, height_in)
            fig = Figure(figsize=size, dpi=DPI * PRESENT_SCALE, layout="constrained")
        else:
            fig = Figure(figsize=(width_in, height_in), dpi=DPI, layout="constrained")
            if fixed or place is not None:
                fig.set_layout_engine("none")
        FigureCanvasAgg(fig)
        yield fig
        engine = fig.get_layout_engine()
        if present and engine is not None:
            restyle(fig, look)
            engine.execute(fig)
            finish(fig)
        elif place is not None:
            place(fig)
        if engine is not None:
            engine.execute(fig)
        fig.set_layout_engine(None)  # even a "none" placeholder would make savefig lay out again


def render_png(fig: Figure) -> bytes:
    """PNG bytes as gr.Plot(format="png") would make them (figure dpi, no bbox_inches), at zlib
    level 1: ~10-15 ms less per figure than the default 6 for ~3% more bytes (measured on the
    Routing and Fleet ring figures); the pixels are the same."""
    with DRAW_LOCK, io.BytesIO() as buf:
        fig.savefig(buf, format="png", pil_kwargs={"compress_level": 1})
        return buf.getvalue()


def layout_edge(fig: Figure) -> float:
    """The right edge, as a figure fraction, that constrained layout keeps content inside (its
    w_pad in from the border): figures laid out by hand narrow their panels to keep to it."""
    return 1 - matplotlib.rcParams["figure.constrained_layout.w_pad"] / fig.get_figwidth()


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
