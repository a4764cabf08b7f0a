"""The figure contract: pure functions params -> FigureResult(figure, metrics), in the lab style."""

from __future__ import annotations

import gc
import io
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import matplotlib.style
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

STYLE_PATH = Path(__file__).resolve().parent.parent / "assets" / "lab.mplstyle"
DPI = 100
WIDTH_IN = 10.0

# Presentation mode: the same pixels, drawn for a projector. The figure gets 1/PRESENT_SCALE of
# its inches at PRESENT_SCALE x the dpi, so every point-sized font, line and marker is
# PRESENT_SCALE x larger in pixels. Shown 980 px wide (full width in a 1024 px window), the
# style's smallest text (8 pt ticks and legends) comes out at 8 x 1.75 x 100/72 x 0.98 = 19.1
# CSS px >= 14 pt (18.7 px); smaller explicit sizes are raised to PRESENT_MIN_PT, and titles
# and axis labels wrap to their panel after a first layout.
PRESENT_SCALE = 1.75
PRESENT_MIN_PT = 8.0

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


# NOTE: a ContextVar, not a global or rcParams: each Gradio worker thread (and each request's
# context) sees its own flag, so one session presenting never enlarges another's figures.
_PRESENTING: ContextVar[bool] = ContextVar("presenting", default=False)


@contextmanager
def presenting(on: bool = True) -> Iterator[None]:
    """Within this block, lab_figure draws projector-sized text (same PNG pixel size)."""
    token = _PRESENTING.set(on)
    try:
        yield
    finally:
        _PRESENTING.reset(token)


def is_presenting() -> bool:
    return _PRESENTING.get()


def _present_size(width_in: float, height_in: float) -> tuple[float, float]:
    """Inches at DPI * PRESENT_SCALE with the pixels the size has at DPI. The canvas is
    int(inches * dpi + 1e-8) pixels (FigureCanvasBase.get_width_height), and px / dpi inches
    come back within a few ulps of px, so the count is the same."""
    dpi = DPI * PRESENT_SCALE
    return int(width_in * DPI + 1e-8) / dpi, int(height_in * DPI + 1e-8) / dpi


def _wrap_words(text: Text, room_px: float, renderer: RendererBase) -> None:
    """Break text's lines at spaces so each fits room_px (a single longer word stays whole)."""
    props = text.get_fontproperties()

    def width(s: str) -> float:
        return renderer.get_text_width_height_descent(s, props, ismath=False)[0]

    out: list[str] = []
    for line in text.get_text().split("\n"):
        current = ""
        for word in line.split(" "):
            trial = f"{current} {word}" if current else word
            if current and width(trial) > room_px:
                out.append(current)
                current = word
            else:
                current = trial
        out.append(current)
    text.set_text("\n".join(out))


def _wrap_to_panels(fig: Figure) -> None:
    """After a first layout: titles and x labels wrap to their axes' width, y labels to its
    height; free texts wrap at the canvas edge (matplotlib's own wrap)."""
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        box = ax.get_position().transformed(fig.transFigure)
        titles = [t for t in ax.get_children() if isinstance(t, Text) and t not in ax.texts]
        for text in (*titles, ax.xaxis.label):
            if text.get_text():
                _wrap_words(text, box.width, renderer)
        if ax.yaxis.label.get_text():
            _wrap_words(ax.yaxis.label, box.height, renderer)
        for text in ax.texts:
            text.set_wrap(True)
    for text in fig.texts:
        text.set_wrap(True)


def _raise_small_text(fig: Figure, min_pt: float) -> None:
    """Every text below min_pt goes up to it, ticks still to be made included (per artist:
    never rcParams)."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for which, ticks in (("major", axis.get_major_ticks(1)),
                                 ("minor", axis.get_minor_ticks(1))):
                if ticks[0].label1.get_fontsize() < min_pt:
                    axis.set_tick_params(which=which, labelsize=min_pt)
    for text in fig.findobj(Text):
        if text.get_fontsize() < min_pt:
            text.set_fontsize(min_pt)


@contextmanager
def lab_figure(height_in: float, width_in: float = WIDTH_IN) -> Iterator[Figure]:
    """Yield a new Figure with constrained layout, built under DRAW_LOCK. On exit the layout is
    solved once and then frozen (the engine dropped), so a later savefig only draws. Under
    presenting(), the same pixels hold projector-sized text (see PRESENT_SCALE)."""
    present = _PRESENTING.get()
    with DRAW_LOCK:
        if present:
            size = _present_size(width_in, height_in)
            fig = Figure(figsize=size, dpi=DPI * PRESENT_SCALE, layout="constrained")
        else:
            fig = Figure(figsize=(width_in, height_in), dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        yield fig
        engine = fig.get_layout_engine()
        if present:
            _raise_small_text(fig, PRESENT_MIN_PT)
            if engine is not None:
                engine.execute(fig)
            _wrap_to_panels(fig)
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
