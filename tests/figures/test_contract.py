"""The figure contract: pure, deterministic, style-independent, labelled, and valid API names."""

from __future__ import annotations

import re

import matplotlib.style
import pytest

from tabs.figure import render_png
from tabs.registry import REGISTRY, all_figures
from tabs.spec import render

CASES = all_figures()
IDS = [f.name for _, f in CASES]


@pytest.mark.parametrize(("tab", "fig"), CASES, ids=IDS)
def test_render_is_deterministic_and_ignores_global_style(tab, fig):
    """Two renders give identical PNG bytes, even under a foreign global style."""
    a = render_png(render(fig, tab).figure)
    with matplotlib.style.context("classic"):
        b = render_png(render(fig, tab).figure)
    assert a == b


@pytest.mark.parametrize(("tab", "fig"), CASES, ids=IDS)
def test_axes_are_labelled(tab, fig):
    """Every visible axes with data has a title; metrics are a non-empty flat dict."""
    result = render(fig, tab)
    for ax in result.figure.axes:
        if ax.get_visible() and ax.axison:
            assert ax.get_title(loc="left") or ax.get_title(), f"{fig.name}: an axes has no title"
    assert result.metrics and all(isinstance(k, str) for k in result.metrics)


def test_registry_names_are_unique_and_stable():
    names = [f.name for _, f in CASES]
    assert len(names) == len(set(names))
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", n) for n in names)
    assert len({t.id for t in REGISTRY}) == len(REGISTRY)
    for tab in REGISTRY:
        assert tab.lesson_path.exists(), f"missing lesson {tab.lesson_path}"
        assert tab.figures, f"tab {tab.id} has no figures"
