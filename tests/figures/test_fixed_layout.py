"""Figures whose normal-mode panels are placed by hand (where constrained layout put them, which
cost up to 40% of a redraw) keep every text on the canvas, keep texts of different panels apart
and keep every plot readable, at the defaults, at each preset and at the heaviest allowed
settings: the settings whose labels are longest. A wording or data change that outgrows the
fixed margins fails here rather than in a student's browser.
"""

from __future__ import annotations

import inspect
import sys

import pytest
from matplotlib.text import Text

from tabs.figure import render_png
from tabs.redraw_bench import _cases
from tabs.registry import all_figures
from tabs.spec import render
from tests.figures.drawn import Drawn, drawn_texts, off_canvas

OVERLAP_SLACK_PX = 1.0  # antialiased glyph edges of neighbours may touch
MIN_AXES_PX = 40  # a plot narrower or shorter than this has been squeezed out by its text


def _hand_placed(fn) -> bool:
    source = inspect.getsource(sys.modules[fn.__module__])
    return 'set_layout_engine("none")' in source or ".set_position(" in source


CASES = [(tab, fig, label, values) for tab, fig in all_figures() if _hand_placed(fig.fn)
         for label, values in _cases(tab, fig)]

pytestmark = pytest.mark.figures


def _owners(figure) -> dict[int, object]:
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


def test_the_hand_placed_figures_are_found():
    names = {fig.name for _, fig, _, _ in CASES}
    assert {"ring_timeline", "engine_cp", "routing_meters", "fleet_ring_removal"} <= names


@pytest.mark.parametrize(("tab", "fig", "label", "values"), CASES,
                         ids=[f"{f.name}-{label}" for _, f, label, _ in CASES])
def test_hand_placed_panels_keep_their_text_on_the_canvas_and_apart(tab, fig, label, values,
                                                                      monkeypatch):
    figure = render(fig, tab, values).figure
    with drawn_texts(monkeypatch, figure) as drawn:
        render_png(figure)
    w, h = figure.bbox.width, figure.bbox.height
    off = off_canvas(drawn, w, h)
    assert not off, f"{fig.name} ({label}): text off the {w:.0f}x{h:.0f} canvas: {off[:3]}"
    clashes = _overlapping(drawn, _owners(figure))
    assert not clashes, f"{fig.name} ({label}): texts of two panels overlap: {clashes[:3]}"
    squeezed = [ax.get_title(loc="left") or ax.get_title() or ax.get_label()
                for ax in figure.axes if ax.get_visible() and ax.axison
                and ax.get_label() != "<colorbar>"
                and min(ax.get_window_extent().width, ax.get_window_extent().height)
                < MIN_AXES_PX]
    assert not squeezed, f"{fig.name} ({label}): plots under {MIN_AXES_PX} px: {squeezed}"
