"""The page's clamp step: a typed value outside a slider's range (or its linked maximum) is set
to the nearest allowed value with a note naming the parameter; validate() still rejects it
(the API's contract)."""

from __future__ import annotations

import gradio as gr
import pytest

from core.errors import ParamError
from tabs.clamp import clamp_reference
from tabs.controls import Slider

pytestmark = pytest.mark.app
DRAFT = Slider("draft_len", "D", 1, 8, 3)


@pytest.mark.parametrize(("raw", "value", "note"), [
    (99, 8, "draft_len 99 is above its maximum 8: set to 8"),
    (0, 1, "draft_len 0 is below its minimum 1: set to 1"),
    (3.4, 3, "draft_len 3.4 is between the slider's steps of 1: set to 3"),
    (None, 3, "draft_len None is not a number: set to its default 3"),
    (5, 5, ""),
])
def test_clamp_sets_the_nearest_allowed_value_and_says_so(raw, value, note):
    assert DRAFT.clamp(raw) == (value, note)
    if note:
        with pytest.raises(ParamError, match="draft_len"):
            DRAFT.validate(raw)


def test_a_linked_slider_clamps_to_its_source_and_followers_move_down():
    accepted = Slider("accepted", "A", 0, 8, 2, max_from="draft_len")
    assert accepted.clamp(6, top=accepted.max_given(4)) == (
        4, "accepted 6 is above its maximum 4: set to 4")
    handle = clamp_reference(DRAFT, None, (accepted,))
    value, follower, note = handle(99, 7, 3)  # accepted 7 >= its shown maximum 3: at its max
    assert value == 8 and follower == gr.update(maximum=8, value=8)
    assert note["visible"] and "99" in note["value"]
    value, follower, note = handle(99, 7, 8)
    assert value == 8 and follower == gr.update(maximum=8, value=7)
    value, follower, note = handle(2, 7, 8)
    assert value == 2 and follower == gr.update(maximum=2, value=2) and not note["visible"]
    value, note = clamp_reference(accepted, DRAFT, ())(6, 4)  # its maximum from its source
    assert value == 4 and note["value"] == "accepted 6 is above its maximum 4: set to 4"


def test_a_follower_at_its_maximum_follows_a_growing_maximum():
    """A step slider showing the whole run (at its shown maximum) keeps showing the whole run
    when the run grows; one below its maximum stays where it is."""
    steps = Slider("steps", "S", 4, 48, 20)
    step = Slider("step", "T", 1, 48, 20, max_from="steps")
    handle = clamp_reference(steps, None, (step,))
    value, follower, _ = handle(30, 20, 20)  # step at its shown maximum 20
    assert value == 30 and follower == gr.update(maximum=30, value=30)
    _, follower, _ = handle(30, 12, 20)  # step 12 of 20: stays at 12
    assert follower == gr.update(maximum=30, value=12)
    _, follower, _ = handle(10, 20, 20)  # shrinking: down to the new maximum
    assert follower == gr.update(maximum=10, value=10)
    _, follower, _ = handle(30, 20, None)  # no shown maximum (not on the page): keeps its value
    assert follower == gr.update(maximum=30, value=20)
