"""The page's clamp (tabs/clamp.py), run at the start of every draw: a typed value outside a
slider's range (or its linked maximum) is set to the nearest allowed value with a note naming
the parameter, linked sliders follow their source, and validate() still rejects the raw value
(the API's contract)."""

from __future__ import annotations

import pytest

from core.errors import ParamError
from tabs.clamp import clamp_tab
from tabs.controls import Choice, Slider
from tabs.spec import FigureSpec, TabSpec

pytestmark = pytest.mark.app
DRAFT = Slider(name="draft_len", label="D", minimum=1, maximum=8, value=3)
ACCEPTED = Slider(name="accepted", label="A", minimum=0, maximum=8, value=2,
                  max_from="draft_len")


def _tab(*controls) -> TabSpec:
    fig = FigureSpec(name="f", title="F", fn=lambda **_: None,
                     params=tuple(c.name for c in controls))
    return TabSpec(id="t", title="T", controls=controls, figures=(fig,))


@pytest.mark.parametrize(("raw", "value", "note"), [
    (99, 8, "D: 99 is above its maximum 8, set to 8"),
    (0, 1, "D: 0 is below its minimum 1, set to 1"),
    (3.4, 3, "D: 3.4 is between the slider's steps of 1, set to 3"),
    (None, 3, "D: None is not a number, set to its default 3"),
    (5, 5, ""),
])
def test_clamp_sets_the_nearest_allowed_value_and_says_so(raw, value, note):
    assert DRAFT.clamp(raw) == (value, note)
    c = clamp_tab(_tab(DRAFT, Choice("k", "K", ("a", "b"), "a")), {"draft_len": raw, "k": "b"},
                  {"draft_len": 3, "k": "a"})
    assert c.values == {"draft_len": value, "k": "b"} and c.note == note
    assert c.changed == ({"draft_len"} if note else set())
    if note:
        with pytest.raises(ParamError, match="draft_len"):
            DRAFT.validate(raw)


def test_a_linked_slider_is_clamped_to_its_source_the_source_first():
    tab = _tab(ACCEPTED, DRAFT)  # the follower declared first: its source is still clamped first
    c = clamp_tab(tab, {"accepted": 6, "draft_len": 4}, {"accepted": 2, "draft_len": 3})
    assert c.values == {"accepted": 4, "draft_len": 4} and c.maxima == {"accepted": 4}
    assert c.note == "A: 6 is above its maximum 4, set to 4"  # the student typed it
    c = clamp_tab(tab, {"accepted": 6, "draft_len": 99}, None)
    assert c.values == {"accepted": 6, "draft_len": 8} and c.maxima == {"accepted": 8}
    assert c.note == "D: 99 is above its maximum 8, set to 8"


def test_a_follower_moved_by_its_source_moves_down_without_a_note():
    tab = _tab(DRAFT, ACCEPTED)
    c = clamp_tab(tab, {"draft_len": 2, "accepted": 5}, {"draft_len": 6, "accepted": 5})
    assert c.values == {"draft_len": 2, "accepted": 2} and c.note == ""
    assert c.changed == {"accepted"} and c.maxima == {"accepted": 2}


def test_a_follower_at_its_maximum_follows_a_growing_maximum():
    """A step slider showing the whole run (at its maximum) keeps showing the whole run when the
    run grows; one below its maximum stays where it is."""
    steps = Slider(name="steps", label="S", minimum=4, maximum=48, value=20)
    step = Slider(name="step", label="T", minimum=1, maximum=48, value=20, max_from="steps")
    tab = _tab(steps, step)
    assert clamp_tab(tab, {"steps": 30, "step": 20}, {"steps": 20, "step": 20}).values == {
        "steps": 30, "step": 30}
    assert clamp_tab(tab, {"steps": 30, "step": 12}, {"steps": 20, "step": 12}).values == {
        "steps": 30, "step": 12}
    assert clamp_tab(tab, {"steps": 10, "step": 20}, {"steps": 20, "step": 20}).values == {
        "steps": 10, "step": 10}
    # the student moved the follower too (to 15): their value holds, clamped to the new maximum
    assert clamp_tab(tab, {"steps": 30, "step": 15}, {"steps": 20, "step": 20}).values == {
        "steps": 30, "step": 15}


def run_length(kind: str) -> int:
    """A run-length function for the tests: 'short' runs 4 steps, anything else 9."""
    return 4 if kind == "short" else 9


def test_a_run_length_slider_shows_exactly_the_runs_steps():
    kind = Choice(name="kind", label="K", choices=("short", "long"), value="long")
    step = Slider(name="step", label="S", minimum=1, maximum=20, value=20,
                  max_of="tests.app.test_clamp:run_length", max_params=("kind",))
    tab = _tab(kind, step)
    c = clamp_tab(tab, {"kind": "long", "step": 20}, None)  # the default: "the whole run"
    assert c.values["step"] == 9 and c.maxima == {"step": 9} and c.note == ""
    c = clamp_tab(tab, {"kind": "short", "step": 9}, {"kind": "long", "step": 9})
    assert c.values["step"] == 4 and c.note == ""  # at the end of the run: stays at the end
    c = clamp_tab(tab, {"kind": "long", "step": 4}, {"kind": "short", "step": 4})
    assert c.values["step"] == 9  # the run grew: still its end
    c = clamp_tab(tab, {"kind": "long", "step": 3}, {"kind": "long", "step": 9})
    assert c.values["step"] == 3  # a step inside the run is the student's
    c = clamp_tab(tab, {"kind": "short", "step": 7}, {"kind": "short", "step": 2})
    assert c.values["step"] == 4 and "S: 7 is above its maximum 4, set to 4" in c.note


@pytest.mark.parametrize(("tab_id", "metric"), [("prefix", "lookup_steps"),
                                                ("engine", "verify_passes")])
def test_the_run_lengths_are_the_runs_the_figures_step_through(tab_id, metric):
    """Each step slider's maximum function against the figure that steps through the run
    (its own count of the run's steps, in its metrics), at every value of its inputs."""
    import itertools

    from tabs.lazy import lazy
    from tabs.registry import REGISTRY
    from tabs.spec import render

    tab = next(t for t in REGISTRY if t.id == tab_id)
    step = tab.control("step")
    fig = next(f for f in tab.figures if "step" in f.params)
    grids = []
    for name in step.max_params:
        c = tab.control(name)
        grids.append(c.choices if isinstance(c, Choice) else
                     sorted({int(c.minimum), int(c.value), int(c.maximum)}))
    for combo in itertools.product(*grids):
        values = dict(zip(step.max_params, combo, strict=True))
        want = render(fig, tab, values).metrics[metric]
        assert lazy(step.max_of)(**values) == want, values
