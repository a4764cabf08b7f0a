"""Visual regression: every default figure of every tab against its reviewed baseline, and its
layout checked as tests/figures/test_layout.py checks the other settings.

Images compare by RMS over 0-255 (matplotlib.testing.compare.compare_images, tolerance below);
metrics compare exactly after canonicalisation (floats to 6 significant digits, |x| < 1e-12 -> 0).
A failure writes expected / actual / diff PNGs and both metrics under test-results/figures/.
Regenerate after an intended change with `python app.py --export tests/figures/baseline`,
then look at every PNG before committing.
"""

from __future__ import annotations

import json
import shutil

import pytest
from matplotlib.testing.compare import compare_images

from tabs.figure import render_png
from tabs.metrics import canonical, to_json
from tabs.registry import all_figures
from tabs.spec import render
from tests.conftest import REPO, RESULTS
from tests.figures.drawn import drawn_texts, layout_problems
from tests.figures.test_layout import check

BASELINE = REPO / "tests" / "figures" / "baseline"
RMS_TOLERANCE = 2.0
CASES = all_figures()

pytestmark = pytest.mark.figures


@pytest.mark.parametrize(("tab", "fig"), CASES, ids=[f.name for _, f in CASES])
def test_figure_matches_baseline(tab, fig, monkeypatch):
    """The default figure keeps its text on the canvas and apart, looks like its baseline and
    shows exactly the golden numbers."""
    expected_png, expected_json = BASELINE / f"{fig.name}.png", BASELINE / f"{fig.name}.json"
    assert expected_png.exists() and expected_json.exists(), (
        f"no baseline for {fig.name}: run `python app.py --export tests/figures/baseline`"
    )
    result = render(fig, tab)
    out = RESULTS / "figures"
    out.mkdir(parents=True, exist_ok=True)
    actual_png = out / f"{fig.name}-actual.png"
    with drawn_texts(monkeypatch, result.figure) as drawn:
        actual_png.write_bytes(render_png(result.figure))
    check(fig, "defaults", False, layout_problems(result.figure, drawn))  # as test_layout
    diff = compare_images(str(expected_png), str(actual_png), tol=RMS_TOLERANCE)
    golden = json.loads(expected_json.read_text())
    same_metrics = canonical(result.metrics) == golden
    if diff is None and same_metrics:
        actual_png.unlink()
        return
    shutil.copy(expected_png, out / f"{fig.name}-expected.png")
    (out / f"{fig.name}-actual.json").write_text(to_json(result.metrics))
    shutil.copy(expected_json, out / f"{fig.name}-expected.json")
    assert diff is None, diff
    assert canonical(result.metrics) == golden


def test_every_figure_has_a_baseline_and_no_orphans():
    """Baselines and the registry list the same figures."""
    names = {f.name for _, f in CASES}
    on_disk = {p.stem for p in BASELINE.glob("*.png")}
    assert names == on_disk, f"missing {names - on_disk}, orphaned {on_disk - names}"
