"""Count axes: a panel whose every value along an axis is a whole number (bytes, pages,
requests, passes) must not label that axis with fractions (0.25, 0.5, ...): a tick between two
counts means nothing. Part of tests/figures/drawn.py's layout problems."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

if TYPE_CHECKING:  # drawn.py calls this module: a type only, no import cycle
    from tests.figures.drawn import Drawn


def _numbers(labels: list[str]) -> list[float] | None:
    """The tick labels as numbers (None when any is not one: categories, dates, words)."""
    out = []
    for t in labels:
        try:
            out.append(float(t.replace("\u2212", "-").replace(",", "").rstrip("%")))
        except ValueError:
            return None
    return out


def _whole(v: np.ndarray) -> bool:
    return bool(np.all(v == np.round(v)))


def _counts_along(ax: Axes, x: bool) -> bool:
    """Whether everything ax plots in data coordinates along x (or y) sits on whole numbers:
    line and scatter points, and shapes (bars, rectangles, polygons) by their edges or, for
    bars centred on their index, by their centres. False for an image, or fewer than 2
    distinct values."""
    if ax.images:
        return False
    col = 0 if x else 1
    points: list[np.ndarray] = []
    shapes: list[tuple[float, float]] = []  # each shape's extent along the axis
    for ln in ax.lines:
        if ln.get_visible() and ln.get_transform() == ax.transData:
            points.append(np.asarray(ln.get_xydata(), dtype=float)[:, col])
    for p in ax.patches:
        if isinstance(p, Rectangle) and p.get_visible() and p.get_data_transform() == ax.transData:
            lo, size = (p.get_x(), p.get_width()) if x else (p.get_y(), p.get_height())
            shapes.append((lo, lo + size))
    for c in ax.collections:
        if not c.get_visible():
            continue
        if isinstance(c, PathCollection) and c.get_offset_transform() == ax.transData \
                and len(c.get_offsets()):
            points.append(np.asarray(c.get_offsets(), dtype=float)[:, col])
        elif c.get_transform() == ax.transData:
            for path in c.get_paths():
                v = path.vertices[:, col]
                shapes.append((float(v.min()), float(v.max())))
    pts = np.concatenate(points) if points else np.zeros(0)
    pts = pts[np.isfinite(pts)]
    edges = np.array(shapes, dtype=float).reshape(-1, 2)
    values = np.concatenate([pts, edges.ravel()])
    if len(np.unique(values[np.isfinite(values)])) < 2 or not _whole(pts):
        return False
    return _whole(edges) or _whole(edges.mean(axis=1))


def fractional_count_ticks(figure: Figure, drawn: list[Drawn]) -> list[str]:
    """Axes that plot only whole numbers along an axis (counts: bytes, pages, requests) yet
    label it with fractions (0.25, 0.5, ...): a tick between two counts means nothing."""
    out = []
    drawn_ids = {id(d.text) for d in drawn}
    for ax in figure.axes:
        if not (ax.get_visible() and ax.axison):
            continue
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if axis.get_scale() != "linear":
                continue
            labels = [t.get_text() for t in axis.get_ticklabels() if id(t) in drawn_ids]
            ticks = _numbers([t for t in labels if t.strip()])
            if ticks and any(t != round(t) for t in ticks) and _counts_along(ax, name == "x"):
                title = ax.get_title(loc="left") or ax.get_title() or ax.get_label()
                out.append(f"{title!r}: {name} ticks {labels} over whole numbers")
    return out
