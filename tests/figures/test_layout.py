"""Every figure, in both modes (normal and presentation), keeps every text on its canvas, apart
from every other text and inside the box it is written in, keeps its legends off the data and
every plot readable (tests/figures/drawn.py), at each preset and at the heaviest allowed
settings (the settings whose labels are longest; the defaults are checked with their
baselines, tests/figures/test_baselines.py and tests/figures/test_presentation.py).
Constrained layout moves panels but never shortens a title, so a long title runs off the canvas
all the same, and figures whose normal-mode panels are placed by hand (where constrained layout
put them, which cost up to 40% of a redraw) have no layout engine to make room at all. A
wording or data change that outgrows its room fails here rather than in a student's browser
or on a projector.
"""

from __future__ import annotations

import pytest

from tabs.figure import presenting, render_png
from tabs.redraw_bench import bench_cases
from tabs.registry import all_figures
from tabs.spec import render, validated
from tests.figures.count_ticks import fractional_count_ticks
from tests.figures.drawn import MIN_CSS_PX, drawn_texts, lay_out, layout_problems
from tests.figures.known_faults import NORMAL


def _distinct_cases() -> list[tuple]:
    """Each figure's preset and heaviest cases, less those that give it the same parameters as
    an earlier case or its defaults (a figure is a pure function of them: the same image)."""
    out, seen = [], set()
    for tab, fig in all_figures():
        for label, values in bench_cases(tab, fig):
            key = (fig.name, tuple(sorted(validated(fig.params, tab, values).items())))
            if key not in seen and label != "defaults":
                out.append((tab, fig, label, values))
            seen.add(key)
    return out


CASES = _distinct_cases()
MODES = (False, True)

pytestmark = pytest.mark.figures


def check(fig, label: str, present: bool, problems: str) -> None:
    """No problem, unless NORMAL lists this normal-mode case (then its fault must persist)."""
    known = None if present else NORMAL.get((fig.name, label))
    if known is None:
        assert not problems, f"{fig.name} ({label}, {_mode(present)}): {problems}"
    else:
        assert problems, f"{fig.name} ({label}) passes now ({known}): remove it from NORMAL"


def _mode(present: bool) -> str:
    return "presentation" if present else "normal"


@pytest.mark.parametrize("present", MODES, ids=_mode)
@pytest.mark.parametrize(("tab", "fig", "label", "values"), CASES,
                         ids=[f"{f.name}-{label}" for _, f, label, _ in CASES])
def test_text_stays_on_the_canvas_and_panels_apart(tab, fig, label, values, present,
                                                   monkeypatch):
    with presenting(present):
        figure = render(fig, tab, values).figure
    with drawn_texts(monkeypatch, figure) as drawn:
        lay_out(figure)
    problems = layout_problems(figure, drawn)
    if present:  # a projector: every text, glyph-drawn labels included, at 14 pt or more
        small = [d for d in drawn if d.css_px < MIN_CSS_PX]
        problems += f"; text below {MIN_CSS_PX} px: {small[:3]}" if small else ""
    check(fig, label, present, problems.lstrip("; "))


def test_known_faults_name_real_cases():
    cases = {(f.name, label) for tab, f in all_figures() for label, _ in bench_cases(tab, f)}
    assert set(NORMAL) <= cases, sorted(set(NORMAL) - cases)


def _bars(integer: bool):
    """A short count chart: 3 bars of 1 byte; the default locator ticks it 0.5 apart."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(4, 3), dpi=100)
    ax = fig.subplots()
    ax.bar([0, 1, 2], [1, 1, 1])
    ax.set_title("drafts")
    if integer:
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(MaxNLocator(integer=True))
    return fig


@pytest.mark.parametrize("integer", [False, True])
def test_fractional_ticks_on_a_count_axis_are_found(integer, monkeypatch):
    """The check fails on what was seen wrong (a short Serve run's bars ticked -0.5 ... 1.5)."""
    figure = _bars(integer)
    with drawn_texts(monkeypatch, figure) as drawn:
        render_png(figure)
    found = fractional_count_ticks(figure, drawn)
    assert bool(found) != integer, found


def test_a_short_serve_run_ticks_whole_passes(monkeypatch):
    """The Serve tab's drafts figure on an 8-byte run (4 passes, 1 draft each)."""
    from tabs.serve import TAB

    tab, fig = next((t, f) for t, f in all_figures() if f.name == "serve_drafts")
    for present in MODES:
        with presenting(present):
            figure = render(fig, tab, {**TAB.defaults(), "n_new": 8, "draft_len": 1}).figure
        with drawn_texts(monkeypatch, figure) as drawn:
            render_png(figure)
        assert not fractional_count_ticks(figure, drawn)


@pytest.mark.parametrize("present", MODES, ids=_mode)
def test_laying_out_draws_what_a_render_draws(present, monkeypatch):
    """lay_out (no rasterising) draws the same texts at the same sizes and extents as
    render_png: what the cases above check is what is served. Every 5th figure at its defaults
    (compared once over all 432 preset and heaviest cases in both modes: no difference)."""
    for tab, fig in all_figures()[::5]:
        seen = []
        for draw in (render_png, lay_out):
            with presenting(present):
                figure = render(fig, tab).figure
            with drawn_texts(monkeypatch, figure) as drawn:
                draw(figure)
            seen.append(sorted((d.text.get_text(), round(d.css_px, 3),
                                tuple(round(x, 3) for x in d.extent.bounds)) for d in drawn))
        assert seen[0] == seen[1], fig.name
