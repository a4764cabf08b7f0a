"""Many short labels drawn as one collection of glyph outlines instead of one Text each.

Up to ~180 cell numbers in a figure cost most of its layout and draw time as Text artists
(issue 14: the Replay ring timeline, the Page pool table). One PathCollection of the labels'
outlines, each shape cached per (text, size, weight, placement), draws in one pass and takes no
part in the layout (the labels sit inside cells or in a title's pad, where there is no room to
make).
"""

from __future__ import annotations

from functools import lru_cache

from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.font_manager import FontProperties
from matplotlib.path import Path
from matplotlib.textpath import TextPath
from matplotlib.transforms import Affine2D, Transform

LINESPACING = 1.1 * 1.2  # a label's line step in font sizes (as a Text with linespacing 1.1)


@lru_cache(maxsize=4096)
def outline(text: str, size: float, bold: bool = False, lift: float | None = None) -> Path:
    """The glyph outlines of text at size points, in points, centred on x = 0. Vertically: one
    line has its ink centred on y = 0, several lines sit a line step apart as a block centred
    on y = 0, and with `lift` (one line) the baseline is lift points above y = 0."""
    lines = text.split("\n")
    prop = FontProperties(weight="bold" if bold else "normal")
    step = size * LINESPACING
    parts = []
    for i, line in enumerate(lines):
        path = TextPath((0, 0), line, size=size, prop=prop)
        box = path.get_extents()
        if lift is not None:
            dy = lift
        elif len(lines) == 1:
            dy = -(box.y0 + box.y1) / 2
        else:
            dy = ((len(lines) - 1) / 2 - i) * step - size * 0.35
        parts.append(path.transformed(Affine2D().translate(-(box.x0 + box.x1) / 2, dy)))
    return parts[0] if len(parts) == 1 else Path.make_compound_path(*parts)


class GlyphLabels(PathCollection):
    """The labels' outlines, one path each, remembering what they say and their size in points
    (what a legibility check reads: tests/figures/drawn.py)."""

    def __init__(self, texts: list[str], size: float, paths: list[Path], **kw) -> None:
        super().__init__(paths, **kw)
        self.texts, self.size = list(texts), size


def labels(ax: Axes, xy: list[tuple[float, float]], texts: list[str], size: float, colour: str,
           *, bold: bool = False, lift: float | None = None, transform: Transform | None = None,
           clip_on: bool = True) -> None:
    """Write texts at xy (in `transform`, data coordinates by default), placed as `outline`
    says, in one collection above the axes' other artists (zorder 3)."""
    if not texts:
        return
    col = GlyphLabels(texts, size, [outline(t, size, bold, lift) for t in texts], offsets=xy,
                      offset_transform=transform or ax.transData,
                      transform=Affine2D().scale(1 / 72) + ax.get_figure().dpi_scale_trans,
                      facecolors=colour, edgecolors="none", linewidths=0, zorder=3)
    col.set_in_layout(False)
    ax.add_collection(col, autolim=False)
    col.set_clip_on(clip_on)
