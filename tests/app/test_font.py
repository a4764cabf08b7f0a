"""The page's text face covers what it writes: every font file assets/page.css gives the
"Lab Sans" family (Gradio's bundled Source Sans Pro files) has a glyph for every ASCII letter
and digit, at every weight the page uses. Gradio's own SemiBold file has 55 glyphs (A and B,
no C-Z): a 600-weight "KDA" drew a small-capital A from it."""

from __future__ import annotations

import re
from pathlib import Path

import gradio
import pytest
from fontTools.ttLib import TTFont

from app import ASSETS, FONT

pytestmark = pytest.mark.app
STATIC = Path(gradio.__file__).parent / "templates" / "frontend"
NEEDED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
FACE = re.compile(r'@font-face\s*\{[^}]*font-family:\s*"Lab Sans";[^}]*\}', re.S)


def _faces() -> list[tuple[str, Path]]:
    css = (ASSETS / "page.css").read_text(encoding="utf-8")
    out = []
    for face in FACE.findall(css):
        weight = re.search(r"font-weight:\s*([\d ]+);", face).group(1)
        url = re.search(r'url\("([^"]+)"\)', face).group(1)
        out.append((weight, STATIC / url))
    return out


def test_the_theme_names_the_family_the_page_defines():
    assert FONT[0] == "Lab Sans"
    weights = [w for w, _ in _faces()]
    assert "400" in weights and any(w.split()[0] <= "600" <= w.split()[-1] for w in weights)


@pytest.mark.parametrize(("weight", "path"), _faces(), ids=[w for w, _ in _faces()])
def test_every_face_has_every_letter_and_digit(weight, path):
    cmap = TTFont(path).getBestCmap()
    assert [c for c in NEEDED if ord(c) not in cmap] == [], path.name


def test_the_semibold_gradio_ships_would_fail_it():
    """The check can fail: Gradio's SemiBold file misses most letters."""
    semi = STATIC / "static/fonts/SourceSansPro/SourceSansPro-SemiBold.woff2"
    cmap = TTFont(semi).getBestCmap()
    assert len([c for c in NEEDED if ord(c) not in cmap]) > 40
