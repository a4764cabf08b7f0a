"""Presentation mode: every figure, drawn under presenting(), is legible on a projector.

Shown full-width in a 1024 px browser window (about 980 CSS px across), every drawn text must
be at least 14 pt (18.7 CSS px), the PNG keeps the normal mode's pixel size (its baseline's),
and the layout is sound as tests/figures/test_layout.py checks it at the other settings: no
text off the canvas, over another text or out of its box, no legend over the data, no plot
squeezed. Each presentation PNG is written to test-results/presentation/ to be looked at.
"""

from __future__ import annotations

import io

import pytest
from PIL import Image

from tabs.figure import DPI, PRESENT_SCALE, lab_figure, presenting, render_png
from tabs.registry import all_figures
from tabs.spec import render
from tests.conftest import RESULTS
from tests.figures.drawn import MIN_CSS_PX, drawn_texts, layout_problems
from tests.figures.test_baselines import BASELINE

# Figures that cannot meet MIN_CSS_PX, each with its reason. Empty: every figure meets it.
ALLOWLIST: dict[str, str] = {}

CASES = all_figures()
OUT = RESULTS / "presentation"

pytestmark = pytest.mark.figures


def _size(png: bytes) -> tuple[int, int]:
    return Image.open(io.BytesIO(png)).size


@pytest.mark.parametrize(("tab", "fig"), CASES, ids=[f.name for _, f in CASES])
def test_presentation_figure_is_legible(tab, fig, monkeypatch):
    """Draws; same pixels as normal mode; every text >= 14 pt at 980 px; a sound layout."""
    normal = Image.open(BASELINE / f"{fig.name}.png").size
    with presenting():
        figure = render(fig, tab).figure
    with drawn_texts(monkeypatch, figure) as drawn:
        png = render_png(figure)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{fig.name}.png").write_bytes(png)
    assert _size(png) == normal
    assert drawn, f"{fig.name}: no text drawn"
    if fig.name not in ALLOWLIST:
        small = [d for d in drawn if d.css_px < MIN_CSS_PX]
        assert not small, f"{fig.name}: text below {MIN_CSS_PX} px: {small[:5]}"
    problems = layout_problems(figure, drawn)
    assert not problems, f"{fig.name}: {problems}"


def test_allowlists_name_real_figures():
    names = {f.name for _, f in CASES}
    assert set(ALLOWLIST) <= names


def test_presenting_is_scoped_and_keeps_pixels():
    """The flag holds only inside the block; odd heights keep their exact pixel count."""
    heights = [1.0 + 0.3 * rows for rows in range(12)] + [4.6, 6.6, 6.8]
    for height in heights:
        with presenting(), lab_figure(height) as fig:
            fig.subplots().set_title("t")
        with presenting(False), lab_figure(height) as plain:
            pass
        assert fig.dpi == DPI * PRESENT_SCALE and plain.dpi == DPI
        assert _size(render_png(fig)) == _size(render_png(plain)), height
    with lab_figure(2.0) as after:
        pass
    assert after.dpi == DPI


def test_small_explicit_text_is_raised(monkeypatch):
    """A 5 pt annotation and 5 pt tick labels made after the block still reach 14 pt."""
    with presenting(), lab_figure(3.0) as fig:
        ax = fig.subplots()
        ax.set_title("t")
        ax.text(0.5, 0.5, "tiny", fontsize=5)
        ax.tick_params(labelsize=5)
        ax.set_xlim(0, 100)  # more ticks are made at draw time, after the block
    with drawn_texts(monkeypatch, fig) as drawn:
        render_png(fig)
    assert len(drawn) > 5 and min(d.css_px for d in drawn) >= MIN_CSS_PX
