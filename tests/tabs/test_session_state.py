"""Lean session state (tabs/session_state.py): a new session copies no block configs, and what
Gradio reads of a session's configs (its `components`, for a deep link) equals what Gradio's own
SessionState gives after the same updates. The oracle is Gradio's class itself."""

from __future__ import annotations

import gradio as gr
import pytest
from gradio import state_holder
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _ops(demo):
    """Every way Gradio's preprocess and postprocess touch a session's configs, as steps."""
    a, b, s, c = demo.parts
    return [
        lambda st: st._update_value_in_config(a._id, 4),            # an input read
        lambda st: st.__setitem__(a._id, gr.Slider(0, 30, value=5, label="a2")),
        lambda st: st._update_config(a._id),                        # an update applied
        lambda st: st._update_value_in_config(a._id, 6),            # ... with its value
        lambda st: st._update_value_in_config(b._id, "streamed"),   # an output value
        lambda st: st.__setitem__(s._id, 3),                        # a State set
        lambda st: st.__setitem__(c._id, gr.Number(1, visible=True)),
        lambda st: st._update_config(c._id),
        lambda st: list(st.components),                             # a deep link, midway
    ]


@given(order=st.lists(st.integers(0, 8), max_size=12))
@settings(max_examples=60, deadline=None)
def test_any_order_of_updates_gives_gradio_s_components(demo, order):
    ops = _ops(demo)
    ours, theirs = LeanSessionState(demo), GRADIOS(demo)
    for i in order:
        ops[i](ours)
        ops[i](theirs)
    assert sorted(map(repr, ours.components)) == sorted(map(repr, theirs.components))


def test_events_build_no_config_until_a_deep_link_asks(demo, monkeypatch):
    """The cost the class removes: Gradio's class builds a config for each update (a room of
    streamed runs spent 11% of the server there); ours builds them only for `components`."""
    built = []
    for state in (LeanSessionState(demo), GRADIOS(demo)):
        calls = []
        real = state.blocks_config.config_for_block
        monkeypatch.setattr(state.blocks_config, "config_for_block",
                            lambda *a, _real=real, _calls=calls: _calls.append(1) or _real(*a))
        for op in _ops(demo)[:-1]:
            op(state)
        built.append(len(calls))
    assert built[0] == 0 and built[1] == 5
