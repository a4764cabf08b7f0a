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
