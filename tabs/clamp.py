"""The page's clamp: what a tab's sliders show after a student moves one, before any figure draws.

`clamp_tab(tab, raw, last)` takes every control's value as the page sent it (`raw`: a number
typed into a slider's box may be outside its range, between its steps, or not a number) and the
values the tab's clamp last set, as the page sent them with `raw` (`last`, None before the
first: tabs/ui_draw.py says why the page keeps them), and returns a Clamped:
  values    every control's allowed value: a slider's is the nearest allowed one (Slider.clamp),
            at most its linked maximum (max_from) or its run's length (max_of) when it has
            one; the controls those depend on are clamped first
  maxima    each linked or run-length slider's maximum for those values
  changed   the controls whose value differs from raw (the page must be set to it)
  note      one line per slider the student set to a value it does not allow ("" if none)
A linked slider the student did not move (raw equals last) that sat at its maximum stays at its
maximum when the maximum moves (a step slider showing the whole run keeps doing so); one that
did not sit there keeps its value, clamped to the new maximum, with no note (the student moved
its source, not it). A run-length slider at its declared maximum (what its default, Reset and
presets set: "the whole run") comes down to the run's length with no note either.

Only the page clamps; the API rejects a bad value with ParamError (Slider.validate). Runs in
the tab's clamp handler (tabs/ui_draw.py), which sets what changed and the note, and in its draw
handler, which draws for the same values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tabs.controls import Slider
from tabs.lazy import lazy
from tabs.spec import TabSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class Clamped:
    values: dict[str, object]
    maxima: dict[str, float]
    changed: frozenset[str]
    note: str


def clamp_tab(tab: TabSpec, raw: Mapping[str, object],
              last: Mapping[str, object] | None) -> Clamped:
    values: dict[str, object] = {}
    maxima: dict[str, float] = {}
    notes: list[str] = []
    linked = [c for c in tab.controls if isinstance(c, Slider) and c.max_from]
    runs = [c for c in tab.controls if isinstance(c, Slider) and c.max_of]
    plain = [c for c in tab.controls if c not in linked and c not in runs]
    for c in plain + linked + runs:  # what a maximum depends on first
        x = raw.get(c.name, c.value)
        if not isinstance(c, Slider):
            values[c.name] = x
            continue
        moved = last is None or x != last.get(c.name)
        top = None
        if c.max_from or c.max_of:
            top = maxima[c.name] = _top(c, values)
            if not moved and last is not None:
                was_top = _top(c, last)
                if c.clamp(x)[0] >= was_top and top != was_top:
                    values[c.name] = c.clamp(top)[0]
                    continue
            if c.max_of and x == c.maximum:  # "the whole run": no note
                moved = False
        v, note = c.clamp(x, top)
        values[c.name] = v
        if note and moved:
            notes.append(note)
    order = {c.name: i for i, c in enumerate(tab.controls)}
    values = dict(sorted(values.items(), key=lambda kv: order[kv[0]]))
    changed = frozenset(n for n, v in values.items() if n in raw and not same_value(raw[n], v))
    return Clamped(values=values, maxima=maxima, changed=changed, note="\n\n".join(notes))


def _top(c: Slider, values: Mapping[str, object]) -> float:
    """c's maximum for these values: its source's plus the offset, or its run's length."""
    if c.max_from:
        return c.max_given(values[c.max_from])  # type: ignore[arg-type]
    length = lazy(c.max_of)(**{p: values[p] for p in c.max_params})
    return max(c.minimum, min(c.maximum, length))


def same_value(a: object, b: object) -> bool:
    """a and b are the same control value: of one type, or equal numbers (a bool is no number)."""
    return type(a) is type(b) and a == b or (
        isinstance(a, int | float) and not isinstance(a, bool) and a == b)
