"""The newest values win, in chromium: controls moved faster than the tab redraws end with
every figure drawn for the values the page shows last, and they stay so (no older draw lands
after the newer one)."""

from __future__ import annotations

import time

import pytest

from tests.e2e.controls import control
from tests.e2e.test_controls import BY_ID, _src, _wait_figures  # noqa: PLC2701

pytestmark = pytest.mark.e2e


def _type(page, tab, name: str, value: object) -> None:
    box = control(page, tab, name)
    box.fill(str(value))
    box.press("Enter")


def _still(page, tab, values: dict, seconds: float = 1.5) -> None:
    """Every figure equals the render for values now, and still does `seconds` later."""
    _wait_figures(page, tab, values)
    time.sleep(seconds)
    want = {f.name: _src(tab, f, values) for f in tab.figures}
    got = {f.name: page.locator(f"#{f.name}-plot [data-testid=matplotlib] img")
           .get_attribute("src") for f in tab.figures}
    assert [n for n in want if got[n] != want[n]] == [], "an older draw landed after the newest"


@pytest.mark.parametrize(("tab_id", "moves"), [
    ("fleet_ring", [("vnodes", 128), ("clusters", 12)]),  # two sliders, one redraw apart
    # the second move redraws only the last two figures, while the first still draws all five:
    # an older draw that does not yield to the newer one lands last
    ("fleet_ring", [("vnodes", 128), ("c", 1.5)]),
    ("fleet_ring", [("vnodes", 128), ("vnodes", 32)]),  # one slider twice
    ("paging", [("seq_len", 300), ("tokens_per_page", 128), ("seq_len", 200)]),
])
def test_sliders_released_within_one_redraw_end_with_the_last_values(page, app_url, tab_id,
                                                                     moves):
    tab = BY_ID[tab_id]
    page.goto(f"{app_url}?tab={tab.id}")
    _wait_figures(page, tab)
    for name, value in moves:  # no wait between moves: each lands inside the previous redraw
        _type(page, tab, name, value)
    _still(page, tab, dict(moves))
