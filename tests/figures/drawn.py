"""The texts a figure actually draws, with their size on screen and extent in pixels: what the
legibility and layout tests check."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

DISPLAY_PX = 980  # the figure's width on screen, full width in a 1024 px window
CANVAS_SLACK_PX = 1.0  # antialiasing: a glyph may touch the edge
OVERLAP_SLACK_PX = 1.0  # antialiased glyph edges of neighbours may touch
MIN_PLOT_PX = 40  # a plot narrower or shorter than this has been squeezed out by its text


class Drawn:
    """A text as drawn: its size in CSS px at DISPLAY_PX and its visible extent in pixels."""

    def __init__(self, text: Text, css_px: float, extent: Bbox) -> None:
        self.text, self.css_px, self.extent = text, css_px, extent

    def __repr__(self) -> str:
        return f"{self.text.get_text()!r} at {self.css_px:.1f} px, extent {self.extent.bounds}"


@contextmanager
def drawn_texts(monkeypatch: pytest.MonkeyPatch, fig: Figure) -> Iterator[list[Drawn]]:
    """Record every Text that actually draws (ticks outside the view, invisible or empty texts
    and texts clipped away entirely do not)."""
    drawn: list[Drawn] = []
    original = Text.draw
    width_px = fig.bbox.width

    def draw(self: Text, renderer) -> None:
        original(self, renderer)
        if not self.get_visible() or not self.get_text().strip():
            return
        extent = self.get_window_extent(renderer)
        clip = self.get_clip_box() if self.get_clip_on() else None
        if clip is not None:
            extent = Bbox.intersection(extent, clip)
            if extent is None:
                return
        css_px = self.get_fontsize() * self.figure.dpi / 72 * DISPLAY_PX / width_px
        drawn.append(Drawn(self, css_px, extent))

    monkeypatch.setattr(Text, "draw", draw)
    yield drawn


def off_canvas(drawn: list[Drawn], w: float, h: float) -> list[Drawn]:
    """The texts that run off a w x h pixel canvas."""
    return [d for d in drawn
            if d.extent.x0 < -CANVAS_SLACK_PX or d.extent.y0 < -CANVAS_SLACK_PX
            or d.extent.x1 > w + CANVAS_SLACK_PX or d.extent.y1 > h + CANVAS_SLACK_PX]


def _owners(figure: Figure) -> dict[int, object]:
    """id(text) -> the panel it belongs to: its title, axis labels and tick labels, legend and
    annotations (tick and axis labels carry no `.axes` of their own). Figure-level texts have
    none. An inset's texts belong to the inset (listed after its parent)."""
    return {id(t): ax for ax in figure.axes for t in ax.findobj(Text)}


def _overlapping(drawn: list[Drawn], owner: dict[int, object]) -> list[tuple[Drawn, Drawn]]:
    out = []
    for i, a in enumerate(drawn):
        for b in drawn[i + 1:]:
            pa, pb = owner.get(id(a.text)), owner.get(id(b.text))
            if pa is None or pb is None or pa is pb:
                continue
            ea, eb = a.extent, b.extent
            if (min(ea.x1, eb.x1) - max(ea.x0, eb.x0) > OVERLAP_SLACK_PX
                    and min(ea.y1, eb.y1) - max(ea.y0, eb.y0) > OVERLAP_SLACK_PX):
                out.append((a, b))
    return out


def layout_problems(figure: Figure, drawn: list[Drawn]) -> str:
    """What is wrong with a drawn figure's layout ("" when nothing): text off the canvas, texts
    of two panels overlapping, a plot squeezed below MIN_PLOT_PX."""
    w, h = figure.bbox.width, figure.bbox.height
    problems = []
    if off := off_canvas(drawn, w, h):
        problems.append(f"text off the {w:.0f}x{h:.0f} canvas: {off[:3]}")
    if clashes := _overlapping(drawn, _owners(figure)):
        problems.append(f"texts of two panels overlap: {clashes[:3]}")
    squeezed = [ax.get_title(loc="left") or ax.get_title() or ax.get_label()
                for ax in figure.axes if ax.get_visible() and ax.axison
                and ax.get_label() != "<colorbar>"
                and min(ax.get_window_extent().width, ax.get_window_extent().height)
                < MIN_PLOT_PX]
    if squeezed:
        problems.append(f"plots under {MIN_PLOT_PX} px: {squeezed}")
    return "; ".join(problems)
