"""Setting a tab's controls in one answer (tabs/ui_set.py): a preset sets every control, its
linked maximum and the clamp record and draws from a kick chained after it; Next step and Play
walk the step slider to its run's end; in class mode the room's controls show its values."""

from __future__ import annotations

import gradio as gr
import pytest

from tabs.registry import REGISTRY
from tabs.ui import build_tab
from tests.app.test_draw import built

pytestmark = pytest.mark.app


def test_a_preset_sets_every_control_its_maximum_and_the_record_and_draws_after():
    """A step preset's answer holds the step, the step slider's maximum (its run's length) and
    the clamp record, all of the preset's values; its draw is a kick the browser sets after the
    page has applied that answer (a js step chained to it), never an output of the answer:
    a draw or a clamp fired while the page applied the answer read it half set."""
    from app import build_app
    from tabs.clamp import clamp_tab
    from tabs.ui_set import preset_handler

    tab = next(t for t in REGISTRY if t.id == "replay_ring")
    parts = built(tab)[0]
    preset = next(p for p in tab.presets if "step" in p.values)
    out = preset_handler(parts)(preset.name)
    want = clamp_tab(tab, {**tab.defaults(), **preset.values}, None)
    step = parts.comps["step"]
    assert out[step]["value"] == preset.values["step"] == 1
    assert out[step]["maximum"] == want.maxima["step"] < tab.control("step").maximum
    assert out[parts.clamped] == want.values and out[parts.why] == f"*{preset.why}*"
    demo = build_app()
    fns = list(demo.fns.values())
    pre = next(f for f in fns if f.name == "handle" and f.targets and any(
        e == "input" for _, e in f.targets) and len(f.outputs) > 5 and
        any(getattr(o, "elem_id", "") == f"{tab.id}-preset" for o in f.outputs))
    kicks = [f for f in fns if f.fn is None and f.js and f.trigger_after == fns.index(pre)]
    assert len(kicks) == 1 and [o.elem_id for o in kicks[0].outputs] == [f"{tab.id}-draw"]
    assert all(getattr(o, "elem_id", None) != f"{tab.id}-draw" for o in pre.outputs)


@pytest.mark.parametrize("tab_id", [t.id for t in REGISTRY if t.stepper])
def test_next_step_moves_one_step_and_stays_at_the_runs_end(tab_id):
    from tabs.clamp import clamp_tab
    from tabs.ui_set import next_step_handler

    tab = next(t for t in REGISTRY if t.id == tab_id)
    parts = built(tab)[0]
    ctl = tab.control(tab.stepper)
    d = clamp_tab(tab, tab.defaults(), None)
    page = [d.values[c.name] for c in tab.controls]
    nxt = next_step_handler(parts)
    at_end = nxt(*page, dict(d.values), None)
    assert at_end[parts.comps[ctl.name]]["value"] == d.values[ctl.name]  # the whole run
    start = {**d.values, ctl.name: ctl.minimum}
    chosen = tab.presets[0].name
    one = nxt(*[start[c.name] for c in tab.controls], dict(start), chosen)
    assert one[parts.comps[ctl.name]]["value"] == ctl.minimum + ctl.step
    assert one[parts.clamped][ctl.name] == ctl.minimum + ctl.step
    assert one[parts.preset]["value"] is None  # the values are no longer the preset's


def test_in_class_mode_the_rooms_controls_show_its_values_and_cannot_move():
    """Serve under --class: slots, prefix cache and routing are the room's; each shows the
    room's value, is not interactive, says why, and no preset that would change one is
    offered."""
    from core.experiments.serve import RoomSetting
    from tabs.serve import TAB as SERVE

    room = {"capacity": RoomSetting(value=32, why="The room's: one cache."),
            "prefix_cache": RoomSetting(value=True, why="The room's: on."),
            "routing": RoomSetting(value=False, why="The room's: off.")}
    with gr.Blocks():
        toggle = gr.Checkbox(False)
        with gr.Tabs(), gr.Tab(SERVE.title):
            parts = build_tab(SERVE, toggle, fixed=room).parts
    for name, r in room.items():
        comp = parts.comps[name]
        assert comp.value == r.value and comp.interactive is False and comp.info == r.why
    assert parts.comps["draft_len"].interactive is not False
    offered = parts.preset.choices
    names = [c[0] if isinstance(c, tuple) else c for c in offered]
    assert "A tiny expert cache" not in names and "Cache-aware routing" not in names
    assert "Plain greedy decoding" in names


def test_play_starts_from_the_first_step_and_the_timer_stops_at_the_runs_end():
    """Play on a run shown whole starts again from its first step with Gradio's timer on;
    each tick is one step; the tick that reaches the end turns the timer off; Pause stops it."""
    from tabs.clamp import clamp_tab
    from tabs.ui_set import PAUSE, PLAY, play_handler, tick_handler

    tab = next(t for t in REGISTRY if t.id == "replay_ring")
    with gr.Blocks():
        toggle = gr.Checkbox(False)
        with gr.Tabs(), gr.Tab(tab.title):
            b = build_tab(tab, toggle)
    parts = b.parts
    stepper = b.stepper
    ctl = tab.control(tab.stepper)
    values = clamp_tab(tab, {**tab.defaults(), "steps": 4}, None).values
    page = lambda v: [v[c.name] for c in tab.controls]  # noqa: E731
    out = play_handler(parts, stepper)(PLAY, *page(values), dict(values), None)
    assert out[parts.comps[ctl.name]]["value"] == ctl.minimum
    assert out[stepper.timer].active is True and out[stepper.play] == PAUSE
    v = dict(values, **{ctl.name: 3})
    out = tick_handler(parts, stepper)(*page(v), dict(v), None)
    assert out[parts.comps[ctl.name]]["value"] == 4  # the end: the timer stops
    assert out[stepper.timer].active is False and out[stepper.play] == PLAY
    v = dict(values, **{ctl.name: 2})
    out = tick_handler(parts, stepper)(*page(v), dict(v), None)
    assert out[parts.comps[ctl.name]]["value"] == 3 and stepper.timer not in out
    out = play_handler(parts, stepper)(PAUSE, *page(v), dict(v), None)
    assert out[stepper.timer].active is False and out[stepper.play] == PLAY
