"""The route through the lab, in chromium: every tab's name shows in the tab bar at 1024 and
1400 px (rows, never an overflow menu); the Overview's route row opens any tab, whose figures
then draw; each tab's last button opens the next tab on the route."""

from __future__ import annotations

import pytest

from tabs.registry import REGISTRY
from tests.e2e.test_controls import PLOT

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("width", [1024, 1400])
def test_every_tab_name_shows_in_the_tab_bar(page, app_url, width):
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(app_url)
    page.locator(PLOT.format(f"{REGISTRY[0].figures[0].name}-plot")).wait_for(timeout=60_000)
    shown = page.evaluate("() => [...document.querySelectorAll('button[role=tab]')]"
                          ".filter(b => b.offsetParent && b.getBoundingClientRect().width > 0)"
                          ".map(b => b.innerText.trim())")
    assert shown == [t.title for t in REGISTRY]
    assert page.locator(".overflow-menu").evaluate_all(
        "es => es.filter(e => e.offsetParent).length") == 0


def test_the_overview_opens_any_tab_and_each_tab_opens_the_next(page, app_url):
    page.goto(app_url)
    page.locator(PLOT.format(f"{REGISTRY[0].figures[0].name}-plot")).wait_for(timeout=60_000)
    route = page.locator("[id^=route-]")
    assert route.evaluate_all("es => es.map(e => e.id.slice(6))") == [t.id for t in REGISTRY[1:]]
    far = REGISTRY[-2]
    page.locator(f"#route-{far.id}").click()
    page.locator(PLOT.format(f"{far.figures[0].name}-plot")).wait_for(timeout=60_000)
    page.locator(f"#{far.id}-next").click()
    last = REGISTRY[-1]
    page.locator(PLOT.format(f"{last.figures[0].name}-plot")).wait_for(timeout=60_000)
    assert page.locator(f"#{last.id}-next").count() == 0  # the route ends there
    # Gradio mounts a tab's components when it first opens: the two tabs opened have theirs
    assert page.locator(f"#{REGISTRY[0].id}-next").count() == 1
    assert page.locator(f"#{far.id}-next").count() == 1
