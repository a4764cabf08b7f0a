"""The texts a figure actually draws, with their size on screen and extent in pixels, and what a
projector shows wrong with them: what the legibility and layout tests check.

Wrong, for a figure as drawn (in either mode):
- a text off the canvas;
- two texts overlapping (of two panels, or of one: tick labels squeezed together, an annotation
  over another);
- a text written in a box (the smallest patch of its own panel its anchor lies inside: a card,
  a cell, a bar) that leaves the box;
- a legend covering what its panel plots (a line or its markers, a bar or other patch, a point,
  an image, a text written on the plot);
- a plot squeezed below a readable size: under min_plot_px a side, or too short (narrow) for
  its own tick labels, which then overlap;
- a count axis with fractional ticks: every value plotted along it is a whole number, and a
  tick reads 0.25.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from matplotlib import cbook
from matplotlib.axes import Axes
from matplotlib.collections import Collection, PathCollection
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.path import Path
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from tabs.figure import DRAW_LOCK
from tabs.glyphs import GlyphLabels
from tests.figures.count_ticks import fractional_count_ticks

DISPLAY_PX = 980  # the figure's width on screen, full width in a 1024 px window
MIN_CSS_PX = 18.7  # presentation mode's least text size: 14 pt at 96 CSS px per inch
CANVAS_SLACK_PX = 1.0  # antialiasing: a glyph may touch the edge
OVERLAP_SLACK_PX = 1.0  # antialiased glyph edges of neighbours may touch
BOX_SLACK_PX = 1.0  # a text may touch the edge of the box it is written in
COVER_SLACK_PX = 1.0  # a legend's frame may touch what it sits beside
TRANSLUCENT = 0.5  # a fill less opaque than this is shading: a legend on it hides nothing
MIN_PLOT_PX = 40  # a plot narrower or shorter than this (at 100 dpi; more at a projector's
# dpi, where the same pixels hold larger text) has been squeezed out by its text
BASE_DPI = 100


class Drawn:
    """A text as drawn: its size in CSS px at DISPLAY_PX and its visible extent in pixels."""

    def __init__(self, text: Text, css_px: float, extent: Bbox) -> None:
        self.text, self.css_px, self.extent = text, css_px, extent

    def __repr__(self) -> str:
        return f"{self.text.get_text()!r} at {self.css_px:.1f} px, extent {self.extent.bounds}"


@contextmanager
def drawn_texts(monkeypatch: pytest.MonkeyPatch, fig: Figure) -> Iterator[list[Drawn]]:
    """Record every Text that actually draws (ticks outside the view, invisible or empty texts
    and texts clipped away entirely do not), and every label drawn as glyph outlines
    (tabs/glyphs.py), each at its size and ink extent."""
    drawn: list[Drawn] = []
    original = Text.draw
    width_px = fig.bbox.width

    def draw(self: Text, renderer) -> None:
        original(self, renderer)
        if not self.get_visible() or not self.get_text().strip():
            return
        extent = _ink(self, Text.get_window_extent(self, renderer))  # an arrow is no text
        clip = self.get_clip_box() if self.get_clip_on() else None
        if clip is not None:
            extent = Bbox.intersection(extent, clip)
            if extent is None:
                return
        css_px = self.get_fontsize() * self.figure.dpi / 72 * DISPLAY_PX / width_px
        drawn.append(Drawn(self, css_px, extent))

    def draw_glyphs(self: GlyphLabels, renderer) -> None:
        original_glyphs(self, renderer)
        if not self.get_visible():
            return
        xy = self.get_offset_transform().transform(self.get_offsets())  # [n, 2] pixels
        clip = self.get_clip_box() if self.get_clip_on() else None
        css_px = self.size * self.figure.dpi / 72 * DISPLAY_PX / width_px
        for text, path, (x, y) in zip(self.texts, self.get_paths(), xy, strict=True):
            if not text.strip():
                continue
            box = self.get_transform().transform_path(path).get_extents()
            extent = Bbox.from_extents(box.x0 + x, box.y0 + y, box.x1 + x, box.y1 + y)
            if clip is not None and (extent := Bbox.intersection(extent, clip)) is None:
                continue
            drawn.append(Drawn(Text(text=text), css_px, extent))  # a stand-in: not on the axes

    original_glyphs = GlyphLabels.draw
    monkeypatch.setattr(Text, "draw", draw)
    monkeypatch.setattr(GlyphLabels, "draw", draw_glyphs)
    yield drawn


def lay_out(fig: Figure) -> None:
    """Lay out and draw every artist without rasterising (Figure.draw_without_rendering): the
    same texts at the same sizes and extents as render_png draws them, in about half the time
    (tests/figures/test_layout.py holds the two equal)."""
    with DRAW_LOCK:
        fig.draw_without_rendering()


def _ink(text: Text, extent: Bbox) -> Bbox:
    """extent without the empty lines a text starts or ends with (a label pushed down a line
    with a leading newline draws nothing there)."""
    lines = text.get_text().split("\n")
    lead = next(i for i, s in enumerate(lines) if s.strip())
    trail = next(i for i, s in enumerate(reversed(lines)) if s.strip())
    if not lead and not trail or text.get_rotation() % 180:
        return extent
    h = extent.height / len(lines)
    return Bbox.from_extents(extent.x0, extent.y0 + trail * h, extent.x1, extent.y1 - lead * h)


def off_canvas(drawn: list[Drawn], w: float, h: float) -> list[Drawn]:
    """The texts that run off a w x h pixel canvas."""
    return [d for d in drawn
            if d.extent.x0 < -CANVAS_SLACK_PX or d.extent.y0 < -CANVAS_SLACK_PX
            or d.extent.x1 > w + CANVAS_SLACK_PX or d.extent.y1 > h + CANVAS_SLACK_PX]


def _overlap(a: Bbox, b: Bbox) -> tuple[float, float]:
    return min(a.x1, b.x1) - max(a.x0, b.x0), min(a.y1, b.y1) - max(a.y0, b.y0)


def _overlapping(drawn: list[Drawn]) -> list[tuple[Drawn, Drawn]]:
    """Pairs of drawn texts whose extents overlap, of one panel or of two."""
    out = []
    for i, a in enumerate(drawn):
        for b in drawn[i + 1:]:
            dx, dy = _overlap(a.extent, b.extent)
            if dx > OVERLAP_SLACK_PX and dy > OVERLAP_SLACK_PX:
                out.append((a, b))
    return out


def _anchor(d: Drawn) -> tuple[float, float]:
    """The point of a text's extent it is aligned at (its position on the plot)."""
    e, t = d.extent, d.text
    x = {"left": e.x0, "right": e.x1}.get(t.get_horizontalalignment(), (e.x0 + e.x1) / 2)
    y = {"top": e.y1, "bottom": e.y0, "baseline": e.y0}.get(t.get_verticalalignment(),
                                                            (e.y0 + e.y1) / 2)
    return x, y


def _box(patch: Patch) -> Bbox | None:
    """A visible patch's extent on the canvas, clipped as it is drawn."""
    if not patch.get_visible() or (not patch.get_fill() and patch.get_linewidth() == 0):
        return None
    box = patch.get_window_extent()
    clip = patch.get_clip_box() if patch.get_clip_on() else None
    return Bbox.intersection(box, clip) if clip is not None else box


def _strictly_inside(x: float, y: float, box: Bbox) -> bool:
    s = BOX_SLACK_PX
    return box.x0 + s < x < box.x1 - s and box.y0 + s < y < box.y1 - s


def _within(e: Bbox, box: Bbox) -> bool:
    s = BOX_SLACK_PX
    return box.x0 - s <= e.x0 and e.x1 <= box.x1 + s and box.y0 - s <= e.y0 and e.y1 <= box.y1 + s


def out_of_box(figure: Figure, drawn: list[Drawn]) -> list[tuple[Drawn, Bbox]]:
    """The texts written on a plot (or the figure) that leave the box they are written in (the
    smallest visible patch of the same panel whose inside holds the text's anchor), or that
    run over the edge of another box of that panel (a bar, a card, a cell: shading too faint
    to hide anything aside)."""
    out = []
    for owner in (*figure.axes, figure):
        boxes = [b for p in owner.patches if (b := _box(p)) is not None and b.width * b.height
                 and (_opacity(p) >= TRANSLUCENT or p.get_linewidth() > 0)]
        if not boxes:
            continue
        written = {id(t) for t in owner.texts}
        for d in drawn:
            if id(d.text) not in written:
                continue
            x, y = _anchor(d)
            holders = [b for b in boxes if _strictly_inside(x, y, b)]
            home = min(holders, key=lambda b: b.width * b.height) if holders else None
            if home is not None and not _within(d.extent, home):
                out.append((d, home))
                continue
            crossed = [b for b in boxes if b is not home and not _within(d.extent, b)
                       and min(_overlap(d.extent, b)) > BOX_SLACK_PX]
            if crossed:
                out.append((d, crossed[0]))
    return out


def _display_path(artist: Line2D | Patch) -> Path:
    if isinstance(artist, Line2D):
        xy = artist.get_xydata()
        step = cbook.STEP_LOOKUP_MAP.get(artist.get_drawstyle())
        if step is not None and len(xy) > 1:
            xy = np.column_stack(step(xy[:, 0], xy[:, 1]))
        return artist.get_transform().transform_path(Path(xy))
    return artist.get_transform().transform_path(artist.get_path())


def _clipped(area: Bbox, artist) -> Bbox | None:
    """area as far as artist can be seen in it (artists clipped to their axes show nowhere
    else)."""
    clip = artist.get_clip_box() if artist.get_clip_on() else None
    return Bbox.intersection(area, clip) if clip is not None else area


def _line_under(line: Line2D, area: Bbox) -> bool:
    xy = line.get_transform().transform(line.get_xydata())
    xy = xy[np.isfinite(xy).all(axis=1)]
    if len(xy) and line.get_marker() not in ("None", "", " ", None):
        if ((xy[:, 0] > area.x0) & (xy[:, 0] < area.x1)
                & (xy[:, 1] > area.y0) & (xy[:, 1] < area.y1)).any():
            return True
    if line.get_linestyle() in ("None", "", " ") or len(xy) < 2:
        return False
    return _display_path(line).intersects_bbox(area, filled=False)


def _opacity(a: Patch | Collection) -> float:
    """How much of what lies behind a filled area it hides (0 transparent, 1 opaque)."""
    face = np.atleast_2d(a.get_facecolor())
    alpha = a.get_alpha()
    return float(face[:, 3].max() if len(face) else 0) * (1.0 if alpha is None else alpha)


def _area_under(paths: list[Path], area: Bbox, opaque_cover: bool) -> bool:
    """A filled shape is covered where an entry crosses its outline (inside, a uniform fill hides
    nothing); an opaque legend frame hides its inside too."""
    return any(p.intersects_bbox(area, filled=opaque_cover) for p in paths)


def _collection_under(c: Collection, area: Bbox, opaque_cover: bool) -> bool:
    if isinstance(c, PathCollection) and len(c.get_offsets()):
        xy = c.get_offset_transform().transform(c.get_offsets())
        return bool(((xy[:, 0] > area.x0) & (xy[:, 0] < area.x1)
                     & (xy[:, 1] > area.y0) & (xy[:, 1] < area.y1)).any())
    tr = c.get_transform()
    paths = [tr.transform_path(p) for p in c.get_paths()]
    if len(c.get_facecolor()) and _opacity(c) >= TRANSLUCENT:
        return _area_under(paths, area, opaque_cover)
    return len(c.get_edgecolor()) > 0 and _area_under(paths, area, False)


def _legend_areas(legend: Legend) -> tuple[list[Bbox], bool]:
    """What a legend draws over its panel: its frame when it has one (True: it hides what is
    behind it), else each entry (handle and text) and its title."""
    s = COVER_SLACK_PX
    frame = legend.get_frame()
    framed = legend.get_frame_on() and frame.get_visible() and frame.get_alpha() != 0
    if framed:
        boxes = [legend.get_window_extent()]
    else:
        px = legend.prop.get_size_in_points() * legend.figure.dpi / 72
        handle = (legend.handlelength + legend.handletextpad) * px
        boxes = [Bbox.from_extents(e.x0 - handle, e.y0, e.x1, e.y1)
                 for t in legend.get_texts() if t.get_text().strip()
                 for e in [t.get_window_extent()]]
        if legend.get_title().get_text().strip():
            boxes.append(legend.get_title().get_window_extent())
    return [Bbox.from_extents(b.x0 + s, b.y0 + s, b.x1 - s, b.y1 - s) for b in boxes], framed


def covered_by(legend: Legend, ax: Axes, drawn: list[Drawn]) -> list[str]:
    """What of ax's plot legend covers: each artist it hides a part of, named by its label or
    kind: a line or its markers, a point, the outline of a bar or other filled shape (all of
    it under a framed legend; translucent shading, which shows through, never), an image, a
    text written on the plot."""
    areas, framed = _legend_areas(legend)
    hidden = []

    def name(a) -> str:
        label = a.get_label() or ""
        return f"{type(a).__name__} {label!r}" if label and not label.startswith("_") \
            else type(a).__name__

    def under(a, area: Bbox) -> bool:
        if isinstance(a, Line2D):
            return _line_under(a, area)
        if isinstance(a, Patch):
            if _box(a) is None:
                return False
            path = [_display_path(a)]
            if a.get_fill() and _opacity(a) >= TRANSLUCENT:
                return _area_under(path, area, framed)
            return a.get_linewidth() > 0 and _area_under(path, area, False)
        if isinstance(a, Collection):
            return _collection_under(a, area, framed)
        return Bbox.intersection(a.get_window_extent(), area) is not None

    for a in (*ax.lines, *ax.patches, *ax.collections, *ax.images):
        if a.get_visible() and any(
                (area := _clipped(box, a)) is not None and under(a, area) for box in areas):
            hidden.append(name(a))
    written = {id(t) for t in ax.texts}
    for d in drawn:
        if id(d.text) in written and any(min(_overlap(d.extent, box)) > 0 for box in areas):
            hidden.append(f"text {d.text.get_text()!r}")
    return hidden


def covering_legends(figure: Figure, drawn: list[Drawn]) -> list[str]:
    """Each legend (of a panel, or of the figure over any panel) that covers plotted data."""
    out = []
    for ax in figure.axes:
        legends = [lg for lg in (ax.get_legend(), *figure.legends) if lg is not None
                   and lg.get_visible()]
        for lg in legends:
            if hidden := covered_by(lg, ax, drawn):
                title = ax.get_title(loc="left") or ax.get_title() or ax.get_label()
                out.append(f"legend over {title!r}: {hidden[:4]}")
    return out


def min_plot_px(figure: Figure) -> float:
    """The smallest readable plot side: MIN_PLOT_PX at 100 dpi, in proportion at others."""
    return MIN_PLOT_PX * figure.dpi / BASE_DPI


def _crowded_ticks(ax: Axes, drawn: list[Drawn]) -> str:
    """"" or which axis of ax has tick labels drawn over each other: the plot is shorter (or
    narrower) than its own ticks need."""
    for name, axis in (("y", ax.yaxis), ("x", ax.xaxis)):
        mine = {id(t) for t in (*axis.get_ticklabels(), *axis.get_ticklabels(minor=True))}
        ext = [d.extent for d in drawn if id(d.text) in mine]
        if any(min(_overlap(a, b)) > OVERLAP_SLACK_PX
               for i, a in enumerate(ext) for b in ext[i + 1:]):
            return name
    return ""


def squeezed(figure: Figure, drawn: list[Drawn]) -> list[str]:
    """The visible plots (not colorbars, thin on purpose) under min_plot_px a side, or too
    short (narrow) for their own tick labels."""
    least = min_plot_px(figure)
    out = []
    for ax in figure.axes:
        if not (ax.get_visible() and ax.axison) or ax.get_label() == "<colorbar>":
            continue
        title = ax.get_title(loc="left") or ax.get_title() or ax.get_label()
        box = ax.get_window_extent()
        if min(box.width, box.height) < least:
            out.append(f"{title!r}: {box.width:.0f} x {box.height:.0f} px")
        elif axis := _crowded_ticks(ax, drawn):
            out.append(f"{title!r}: {box.width:.0f} x {box.height:.0f} px, its {axis} tick "
                       "labels overlap")
    return out


def layout_problems(figure: Figure, drawn: list[Drawn]) -> str:
    """What is wrong with a drawn figure's layout ("" when nothing): see the module docstring."""
    w, h = figure.bbox.width, figure.bbox.height
    problems = []
    if off := off_canvas(drawn, w, h):
        problems.append(f"text off the {w:.0f}x{h:.0f} canvas: {off[:3]}")
    if clashes := _overlapping(drawn):
        problems.append(f"texts overlap: {clashes[:3]}")
    if spilled := out_of_box(figure, drawn):
        problems.append(f"texts leave their box: {[(d, b.bounds) for d, b in spilled[:3]]}")
    if legends := covering_legends(figure, drawn):
        problems.append(f"legends cover data: {legends[:3]}")
    if small := squeezed(figure, drawn):
        problems.append(f"plots squeezed (under {min_plot_px(figure):.0f} px or their tick "
                        f"labels): {small}")
    if fractions := fractional_count_ticks(figure, drawn):
        problems.append(f"fractional ticks on a count axis: {fractions[:3]}")
    return "; ".join(problems)
