"""Every figure keeps every text on its canvas, the texts of different panels apart and every
plot readable, at each preset and at the heaviest allowed settings (the settings whose labels
are longest; the defaults are checked with their baselines, tests/figures/test_baselines.py).
Constrained layout moves panels but never shortens a title, so a long title runs off the canvas
all the same, and figures whose normal-mode panels are placed by hand (where constrained layout
put them, which cost up to 40% of a redraw) have no layout engine to make room at all. A
wording or data change that outgrows its room fails here rather than in a student's browser.
"""

from __future__ import annotations

import pytest

from tabs.figure import render_png
from tabs.redraw_bench import bench_cases
from tabs.registry import all_figures
from tabs.spec import render
from tests.figures.drawn import drawn_texts, layout_problems

CASES = [(tab, fig, label, values) for tab, fig in all_figures()
         for label, values in bench_cases(tab, fig) if label != "defaults"]

pytestmark = pytest.mark.figures


@pytest.mark.parametrize(("tab", "fig", "label", "values"), CASES,
                         ids=[f"{f.name}-{label}" for _, f, label, _ in CASES])
def test_text_stays_on_the_canvas_and_panels_apart(tab, fig, label, values, monkeypatch):
    figure = render(fig, tab, values).figure
    with drawn_texts(monkeypatch, figure) as drawn:
        render_png(figure)
    problems = layout_problems(figure, drawn)
    assert not problems, f"{fig.name} ({label}): {problems}"
