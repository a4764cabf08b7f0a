"""The live text panel (TabSpec.live): declared like a figure, served under its own api_name,
validated like a figure's controls, and never part of a figure's output.

Pinned: a LiveSpec whose params have no control, or whose name is a figure's, is refused; the
prefix tab's panel answers through gradio_client with a measured table; bad input is a clear
error naming the parameter.
"""

from __future__ import annotations

import gradio as gr
import pytest

from core.errors import ParamError
from tabs.bench_client import bench_client
from tabs.controls import Slider
from tabs.prefix import TAB as PREFIX
from tabs.spec import FigureSpec, LiveSpec, TabSpec
from tabs.ui import live_handler

pytestmark = pytest.mark.app


def _spec(live: LiveSpec) -> TabSpec:
    controls = (Slider(name="a", label="A", minimum=0, maximum=3, value=1),
                Slider(name="b", label="B", minimum=0, maximum=3, value=1))
    fig = FigureSpec("fig_a", "A", lambda a: None, ("a",))
    return TabSpec(id="t", title="T", controls=controls, figures=(fig,), live=live)


def test_live_spec_is_checked_like_a_figure():
    _spec(LiveSpec("live_a", "A", lambda a: "", ("a",)))
    with pytest.raises(ParamError, match="no control"):
        _spec(LiveSpec("live_a", "A", lambda c: "", ("c",)))
    with pytest.raises(ParamError, match="taken"):
        _spec(LiveSpec("fig_a", "A", lambda a: "", ("a",)))


def test_bad_input_names_the_parameter():
    with pytest.raises(gr.Error, match="preset"):
        live_handler(PREFIX.live, PREFIX)(gr.Progress(), 1, "nope")
    with pytest.raises(gr.Error, match=r"checkpoint_every.*\[1, 8\]"):
        live_handler(PREFIX.live, PREFIX)(gr.Progress(), 9, "hit")


def test_live_endpoint_measures(app_url):
    client = bench_client(app_url)
    try:
        text = client.predict(3, "hit", api_name=f"/{PREFIX.live.name}")
    finally:
        client.close()
    assert "| cold (no prefix cache) |" in text and "Saved:" in text
    assert "384 tokens reused" in text  # k = 3: the hit resumes at block 6
