"""Presets: each is valid for its tab (checked at import too), changes at least one control,
and every figure it touches draws through the same handler the app uses."""

from __future__ import annotations

import pytest

from tabs.registry import REGISTRY
from tabs.spec import render

CASES = [(t, p) for t in REGISTRY for p in t.presets]


def test_every_tab_has_presets():
    missing = [t.id for t in REGISTRY if len(t.presets) < 2]
    assert not missing, f"tabs with fewer than two presets: {missing}"


@pytest.mark.parametrize(("tab", "preset"), CASES, ids=[f"{t.id}-{p.name}" for t, p in CASES])
def test_preset_changes_something_and_draws(tab, preset):
    d = tab.defaults()
    assert any(d[k] != v for k, v in preset.values.items()), "a preset must move a control"
    assert preset.why.strip() and len(preset.why) <= 160
    touched = [f for f in tab.figures if set(f.params) & set(preset.values)]
    assert touched, "a preset must change at least one figure"
    hero = touched[0]
    result = render(hero, tab, {**d, **preset.values})
    assert result.metrics
