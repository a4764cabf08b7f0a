"""build_app() is the app users get: it builds quietly, has every tab, and names every endpoint."""

from __future__ import annotations

import warnings

import gradio as gr
import pytest

from app import build_app
from tabs.registry import REGISTRY, all_figures
from tabs.ui import _handler

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


@pytest.mark.parametrize(("tab", "fig"), all_figures(), ids=[f.name for _, f in all_figures()])
def test_handler_rejects_out_of_range_input_by_name(tab, fig):
    """An out-of-range value raises gr.Error naming the parameter and its allowed range."""
    first = tab.control(fig.params[0])
    bad = getattr(first, "maximum", None)
    values = [tab.control(p).value for p in fig.params]
    values[0] = bad + 1 if bad is not None else "not-a-choice"
    with pytest.raises(gr.Error) as err:
        _handler(fig, tab)(*values)
    assert first.name in str(err.value.message)
