"""Lean session state (tabs/session_state.py): a new session copies no block configs, and what
Gradio reads of a session's configs (its `components`, for a deep link) equals what Gradio's own
SessionState gives after the same updates. The oracle is Gradio's class itself."""

from __future__ import annotations

import gradio as gr
import pytest
from gradio import state_holder

from tabs.session_state import LeanSessionState, install

pytestmark = pytest.mark.app
GRADIOS = LeanSessionState.__mro__[1]  # Gradio's own class (install() may have replaced the name)


@pytest.fixture(scope="module")
def demo():
    with gr.Blocks() as d:
        a = gr.Slider(0, 10, value=3, label="a")
        b = gr.Markdown("b")
        s = gr.State(1)
        with gr.Row():
            c = gr.Number(5, visible=False)
        gr.Button("go").click(lambda x: x, a, b)
    d.parts = (a, b, s, c)
    return d


def _update(state, a, b, s, c):
    """What Gradio's postprocess does to a session for a value, a prop update and a State."""
    state[a._id] = gr.Slider(0, 20, value=7, label="a")
    state._update_config(a._id)
    state._update_value_in_config(b._id, "new text")
    state[s._id] = 2
    state[c._id] = gr.Number(9, visible=True)
    state._update_config(c._id)


def test_a_new_session_copies_no_block_config(demo):
    assert LeanSessionState(demo).config_values == {}
    assert len(GRADIOS(demo).config_values) == len(demo.blocks)


def test_components_equal_gradio_s_own_before_and_after_updates(demo):
    ours, theirs = LeanSessionState(demo), GRADIOS(demo)
    assert list(ours.components) == list(theirs.components)
    for state in (ours, theirs):
        _update(state, *demo.parts)
    mine = sorted(map(repr, ours.components))
    assert mine == sorted(map(repr, theirs.components)) and any("new text" in m for m in mine)
    assert ours[demo.parts[2]._id] == theirs[demo.parts[2]._id] == 2


def test_install_makes_new_sessions_lean(demo, monkeypatch):
    monkeypatch.setattr(state_holder, "SessionState", GRADIOS)
    install()
    holder = state_holder.StateHolder()
    holder.set_blocks(demo)
    assert isinstance(holder["some-session"], LeanSessionState)
