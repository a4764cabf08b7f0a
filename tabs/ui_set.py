"""Setting a tab's controls at once, in one answer: a preset, Reset, and the step-through
slider's Next step and Play.

Each answer sets every control to the values the tab's clamp would leave them at
(tabs/clamp.py, nothing moved before: `control_updates`), every slider whose maximum follows
another control or its run with that maximum, and the tab's clamp record with them; then a
step chained after the answer sets the tab's kick number in the browser (NEW_KICK), whose
change draws the tab (tabs/ui_wire.py). The kick is never part of the answer: Gradio fires an
output's change while the page is still applying the answer, and a clamp or draw fired then
read the page half set (the step slider old, the record new) and put a step preset back at its
run's end or cleared the preset menu (tests/e2e/test_lecturer_route.py).

The step-through slider (TabSpec.stepper) has Next step (one step on, at most its run's end)
and Play (Gradio's own gr.Timer, PLAY_EVERY_S a step, from the first step when the run is shown
whole, off at the run's end; Pause turns it off).
"""

# No `from __future__ import annotations` here (tabs/ui.py says why).

from dataclasses import dataclass

import gradio as gr

from tabs.clamp import clamp_tab
from tabs.spec import TabSpec
from tabs.ui_draw import TabParts

# a new value for a tab's kick number, set in the browser after an answer (module docstring)
NEW_KICK = "() => performance.timeOrigin + performance.now()"


def control_updates(tab: TabSpec, values: dict[str, object]) -> tuple[dict[str, dict], dict]:
    """(gr.update per control name, the clamped values) setting `values` as the tab's clamp
    would leave them (tabs/clamp.py, nothing moved before): every slider whose maximum follows
    another control or its run gets that maximum with its value, in the same answer, so no
    later clamp has anything left to set (a clamp that read the page before this answer was
    applied set a step preset back to its run's end)."""
    c = clamp_tab(tab, values, None)
    ups = {}
    for ctl in tab.controls:
        v = c.values[ctl.name]
        ups[ctl.name] = (gr.update(value=v, maximum=c.maxima[ctl.name])
                         if ctl.name in c.maxima else gr.update(value=v))
    return ups, dict(c.values)


def set_values(parts: TabParts, values: dict[str, object]) -> dict:
    """Set every control to `values` (clamped), and the tab's clamp record with them (so a
    clamp reading this answer's controls sees nothing moved); a kick chained after the answer
    draws them (NEW_KICK)."""
    ups, clamped = control_updates(parts.tab, {**values, **parts.fixed})
    return {**{parts.comps[n]: u for n, u in ups.items()}, parts.clamped: clamped}


def reset_handler(parts: TabParts):
    def handle() -> dict:
        out = set_values(parts, parts.tab.defaults())
        if parts.preset is not None:
            out |= {parts.preset: gr.update(value=None), parts.why: ""}
        return out

    return handle


def preset_handler(parts: TabParts):
    by_name = {p.name: p for p in parts.tab.presets}

    def handle(name: object) -> dict:
        preset = by_name.get(name) if isinstance(name, str) else None
        if preset is None:
            return {parts.why: ""}
        out = set_values(parts, {**parts.tab.defaults(), **preset.values})
        return out | {parts.why: f"*{preset.why}*"}

    return handle


PLAY, PAUSE = "Play ▶▶", "Pause ❚❚"
PLAY_EVERY_S = 1.5  # a played step's time on the screen


@dataclass(frozen=True)
class Stepper:
    """The step-through slider above the figure it moves, its next-step and play buttons, and
    the play button's timer (Gradio's own gr.Timer: a tick a step, off until played)."""

    slider: gr.Slider
    next: gr.Button
    play: gr.Button
    timer: gr.Timer


def _step_on(parts: TabParts, inputs: tuple, *, restart: bool = False) -> tuple[dict, bool]:
    """(the answer setting the stepper one step on, at most its run's end (the clamp's
    maximum), with the clamp record, as a preset sets values; whether that is the run's end).
    restart: at the end already, back to the first step. The preset shown stays only while
    the values still are its own."""
    tab, names = parts.tab, list(parts.comps)
    ctl = tab.control(tab.stepper)
    raw = dict(zip(names, inputs, strict=False))
    last, *extra = inputs[len(names):]
    c = clamp_tab(tab, raw, last if isinstance(last, dict) else None)
    top = c.maxima.get(ctl.name, ctl.maximum)
    now = c.values[ctl.name]
    step = ctl.minimum if restart and now >= top else min(top, now + ctl.step)
    values = {**c.values, ctl.name: ctl.clamp(step)[0]}
    out = set_values(parts, values)
    chosen = next((p for p in tab.presets if extra and p.name == extra[0]), None)
    if parts.preset is not None and (chosen is None or any(
            values[k] != v for k, v in chosen.values.items())):
        out |= {parts.preset: gr.update(value=None), parts.why: ""}
    return out, values[ctl.name] >= top


def next_step_handler(parts: TabParts):
    """One step on, then drawn (NEW_KICK)."""
    def handle(*inputs: object) -> dict:
        return _step_on(parts, inputs)[0]

    handle.__name__ = f"{parts.tab.id}_next_step"
    return handle


def play_handler(parts: TabParts, stepper: Stepper):
    """Play: the timer on (from the first step when the run is shown whole); Pause: off."""
    def handle(label: object, *inputs: object) -> dict:
        if label == PAUSE:
            return {stepper.timer: gr.Timer(active=False), stepper.play: PLAY}
        out, end = _step_on(parts, inputs, restart=True)
        return {**out, stepper.timer: gr.Timer(active=not end), stepper.play: PAUSE}

    handle.__name__ = f"{parts.tab.id}_play"
    return handle


def tick_handler(parts: TabParts, stepper: Stepper):
    """A played step: one step on; at the run's end the timer stops."""
    def handle(*inputs: object) -> dict:
        out, end = _step_on(parts, inputs)
        if end:
            out |= {stepper.timer: gr.Timer(active=False), stepper.play: PLAY}
        return out

    handle.__name__ = f"{parts.tab.id}_tick"
    return handle


def wire_set(parts: TabParts, kick: gr.Number, reset: gr.Button,
             stepper: Stepper | None) -> None:
    """Reset, the preset menu, and the stepper's Next step, Play and timer: each answer sets
    the controls, then a chained kick draws them (module docstring)."""
    quick = dict(api_visibility="private", queue=False, show_progress="hidden",
                 preprocess=False)
    draw_after = dict(fn=None, inputs=None, outputs=[kick], js=NEW_KICK, queue=False,
                      show_progress="hidden", api_visibility="private")
    preset = parts.preset
    outputs = [*parts.comps.values(), parts.clamped,
               *(x for x in (preset, parts.why) if x is not None)]
    reset.click(reset_handler(parts), None, outputs, **quick).then(**draw_after)
    if preset is not None:
        preset.input(preset_handler(parts), [preset], outputs, **quick).then(**draw_after)
    if stepper is None:
        return
    inputs = [*parts.comps.values(), parts.clamped, *([preset] if preset is not None else [])]
    playing = [stepper.play, stepper.timer, *outputs]
    stepper.next.click(next_step_handler(parts), inputs, outputs, **quick).then(**draw_after)
    stepper.play.click(play_handler(parts, stepper), [stepper.play, *inputs], playing,
                       **quick).then(**draw_after)
    stepper.timer.tick(tick_handler(parts, stepper), inputs, playing,
                       **quick).then(**draw_after)
