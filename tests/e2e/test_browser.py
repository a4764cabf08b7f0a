"""Headless Debian chromium: open the lab, visit every tab, move its hero slider, check the plot."""

from __future__ import annotations

import base64

import pytest

from tabs.controls import Slider
from tabs.figure import render_png
from tabs.registry import REGISTRY
from tabs.spec import render

pytestmark = pytest.mark.e2e


def _img(page, fig_name: str):
    return page.locator(f"#{fig_name}-plot [data-testid=matplotlib] img")


def _png(src: str) -> bytes:
    head, data = src.split(",", 1)
    assert head == "data:image/png;base64"
    return base64.b64decode(data)


@pytest.mark.parametrize("tab", REGISTRY, ids=[t.id for t in REGISTRY])
def test_tab_plots_and_hero_slider(page, app_url, tab):
    page.goto(app_url)
    page.get_by_role("tab", name=tab.title).click()
    for fig in tab.figures:
        _img(page, fig.name).wait_for(state="visible", timeout=30_000)
    hero = tab.hero
    assert isinstance(hero, Slider) and hero.demo is not None, f"{tab.id}: hero needs a demo value"
    fig = next(f for f in tab.figures if hero.name in f.params)
    before = _img(page, fig.name).get_attribute("src")
    assert _png(before) == render_png(render(fig, tab).figure)
    value = int(hero.demo) if hero.integer else hero.demo
    want = render_png(render(fig, tab, {hero.name: value}).figure)
    assert want != _png(before), f"{tab.id}: the demo value must change the figure"
    box = page.locator(f"#{tab.id}-{hero.name} input[type=number]")
    box.fill(str(hero.demo))
    box.blur()
    want_src = "data:image/png;base64," + base64.b64encode(want).decode()
    # The plot may pass through intermediate renders; the final one must equal the direct render.
    page.wait_for_function(
        "([sel, want]) => { const i = document.querySelector(sel); return i && i.src === want; }",
        arg=[f"#{fig.name}-plot [data-testid=matplotlib] img", want_src],
        timeout=30_000,
    )


LINKED = [(t, c) for t in REGISTRY for c in t.controls if isinstance(c, Slider) and c.max_from]


@pytest.mark.parametrize(("tab", "dep"), LINKED, ids=[f"{t.id}-{c.name}" for t, c in LINKED])
def test_linked_slider_follows_its_maximum_then_figures_redraw(page, app_url, tab, dep):
    """Dropping the source below the dependent slider moves the dependent down (visibly) and the
    figures redraw with both new values (a stale pair would be refused and never drawn)."""
    src = tab.control(dep.max_from)
    low = int(src.minimum)
    assert low < dep.value, "the test needs the source's minimum below the dependent's default"
    page.goto(app_url)
    page.get_by_role("tab", name=tab.title).click()
    fig = next(f for f in tab.figures if {src.name, dep.name} <= set(f.params))
    _img(page, fig.name).wait_for(state="visible", timeout=30_000)
    box = page.locator(f"#{tab.id}-{src.name} input[type=number]")
    box.fill(str(low))
    box.blur()
    want = render_png(render(fig, tab, {src.name: low, dep.name: low}).figure)
    want_src = "data:image/png;base64," + base64.b64encode(want).decode()
    page.wait_for_function(
        "([sel, want]) => { const i = document.querySelector(sel); return i && i.src === want; }",
        arg=[f"#{fig.name}-plot [data-testid=matplotlib] img", want_src],
        timeout=30_000,
    )
    dep_box = page.locator(f"#{tab.id}-{dep.name} input[type=number]")
    assert float(dep_box.input_value()) == low
