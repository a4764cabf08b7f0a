"""build_app() is the app users get: it builds quietly, has every tab, and names every endpoint."""

from __future__ import annotations

import warnings

import gradio as gr
import pytest

from app import build_app
from tabs.controls import Check, Choice, Text
from tabs.registry import REGISTRY, all_figures
from tabs.ui_draw import api_handler

pytestmark = pytest.mark.app


def test_build_app_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        demo = build_app()
    assert isinstance(demo, gr.Blocks)


def test_every_tab_and_endpoint_present():
    demo = build_app()
    labels = [b.label for b in demo.blocks.values() if isinstance(b, gr.Tab)]
    assert labels == [t.title for t in REGISTRY]
    api_names = {fn.api_name for fn in demo.fns.values()}
    for _, fig in all_figures():
        assert fig.name in api_names, f"figure {fig.name} has no endpoint"


def _bad_values(c) -> list[object]:
    if isinstance(c, Choice):
        return ["not-a-choice", None]
    if isinstance(c, Text):
        return ["", "x" * (c.max_bytes + 1), 7, "\ud800"]
    if isinstance(c, Check):
        return ["false", 1, None]
    bad: list[object] = [c.minimum - c.step, c.maximum + c.step, float("nan"), "7"]
    if c.integer:
        bad.append(c.minimum + 0.5)
    return bad


CONTROL_CASES = [
    (tab, c, next(f for f in tab.figures if c.name in f.params), bad)
    for tab in REGISTRY
    for c in tab.controls
    if any(c.name in f.params for f in tab.figures)
    for bad in _bad_values(c)
]


@pytest.mark.parametrize(
    ("tab", "control", "fig", "bad"),
    CONTROL_CASES,
    ids=[f"{t.id}-{c.name}-{b!r}" for t, c, _, b in CONTROL_CASES],
)
def test_handler_rejects_bad_input_naming_parameter_and_range(tab, control, fig, bad):
    """Every control: out-of-range, NaN, wrong-type and off-grid values raise gr.Error whose
    message names the parameter and its allowed range (or its choices)."""
    values = [bad if p == control.name else tab.control(p).value for p in fig.params]
    with pytest.raises(gr.Error) as err:
        api_handler(fig, tab)(*values)
    message = str(err.value.message)
    assert control.name in message
    if isinstance(control, Choice):
        assert all(choice in message for choice in control.choices), message
    elif isinstance(control, Text):
        assert "text" in message or f"1 to {control.max_bytes} bytes" in message, message
    elif isinstance(control, Check):
        assert "true or false" in message, message
    else:
        lo, hi = (
            (int(control.minimum), int(control.maximum))
            if control.integer
            else (control.minimum, control.maximum)
        )
        assert f"[{lo}, {hi}]" in message, message


def test_a_failing_figure_shows_its_error_in_its_place_and_the_tab_lives():
    """A figure whose code raises draws an error panel in its own place (no exception reaches
    Gradio); the other figures of the tab keep drawing."""
    from dataclasses import replace

    from tabs.figure import render_png
    from tabs.spec import render

    tab = REGISTRY[0]

    def broken(**_: object):
        raise RuntimeError("injected failure")

    bad = replace(tab.figures[0], fn=broken)
    plot, table = api_handler(bad, tab)(*[tab.control(p).value for p in bad.params])
    assert plot.type == "matplotlib" and plot.plot.startswith("data:image/png;base64,")
    assert "injected failure" in table and "RuntimeError" in table
    good = tab.figures[-1]
    plot, table = api_handler(good, tab)(*[tab.control(p).value for p in good.params])
    import base64
    assert base64.b64decode(plot.plot.split(",", 1)[1]) == render_png(render(good, tab).figure)


def test_tabs_declare_sliders_with_the_loaded_models_dims():
    """shipped_dims() reads the manifest only (no shard is read while the app is built); it
    must be the model load_model builds after verifying every shard."""
    from core.experiments.shipped import model
    from core.model.manifest import shipped_dims

    assert shipped_dims() == model().dims
