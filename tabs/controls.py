"""Control declarations: one source for the widget, its default, and its input validation."""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.errors import ParamError, check_choice, check_float, check_int


def short_label(label: str) -> str:
    """A label's head: the words before its first " (" or ":"."""
    for cut in (" (", ":"):
        label = label.split(cut, 1)[0]
    return label.strip()


@dataclass(frozen=True, kw_only=True)
class Slider:
    """A numeric control. `demo` is a second value the browser test moves the slider to.
    `max_from` names another slider whose value plus `max_offset` is this one's maximum
    (accepted <= drafted; top-k <= slots - 1): the UI moves this slider down with it, visibly,
    before redrawing. `max_of` ("module:function", called with the values of the controls in
    `max_params`) gives a step-through slider the length of the run those controls make as its
    maximum: the page shows exactly the run's steps (tabs/clamp.py); the declared `maximum`
    bounds every run and is what the API accepts."""

    name: str
    label: str
    minimum: float
    maximum: float
    value: float
    step: float = 1
    integer: bool = True
    info: str = ""
    demo: float | None = None
    max_from: str | None = None
    max_offset: int = 0
    max_of: str | None = None
    max_params: tuple[str, ...] = ()

    @property
    def shown_as(self) -> str:
        """The control as a student reads it on the page: its label's head, before any
        parenthesis or colon ("Draft length γ"), in a clamp note; the API's errors name
        `name`, the parameter an API client passes."""
        return short_label(self.label)

    def max_given(self, source: float) -> float:
        """This slider's maximum when its max_from source is at `source`."""
        return min(self.maximum, source + self.max_offset)

    def clamp(self, raw: object, top: float | None = None) -> tuple[int | float, str]:
        """What the browser's slider shows for a typed raw value: the nearest allowed value
        (at most `top`, the linked maximum, when given) and a note saying what changed ("" when
        raw was allowed). Only the UI clamps; validate() rejects (the API's contract)."""
        hi = self.maximum if top is None else min(self.maximum, top)
        try:
            x = float(raw)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            x = math.nan
        if isinstance(raw, bool) or not math.isfinite(x):
            return self._typed(self.value), (
                f"{self.shown_as}: {raw!r} is not a number, set to its default "
                f"{_num(self.value)}")
        if x > hi:
            return self._typed(hi), f"{self.shown_as}: {_num(x)} is above its maximum " \
                                    f"{_num(hi)}, set to {_num(hi)}"
        if x < self.minimum:
            lo = self.minimum
            return self._typed(lo), f"{self.shown_as}: {_num(x)} is below its minimum " \
                                    f"{_num(lo)}, set to {_num(lo)}"
        k = round((x - self.minimum) / self.step)
        v = min(round(self.minimum + k * self.step, 9), hi)
        if abs(v - x) > 1e-9:
            return self._typed(v), f"{self.shown_as}: {_num(x)} is between the slider's " \
                                   f"steps of {_num(self.step)}, set to {_num(v)}"
        return self._typed(v), ""

    def _typed(self, x: float) -> int | float:
        return int(round(x)) if self.integer else float(x)

    def validate(self, value: object) -> int | float:
        if self.integer:
            return check_int(self.name, value, int(self.minimum), int(self.maximum))
        return check_float(self.name, value, self.minimum, self.maximum)


@dataclass(frozen=True)
class Choice:
    """A categorical control (rendered as a radio group)."""

    name: str
    label: str
    choices: tuple[str, ...]
    value: str
    info: str = ""
    demo: str | None = None

    def validate(self, value: object) -> str:
        return str(check_choice(self.name, value, self.choices))


@dataclass(frozen=True)
class Text:
    """A text box (the Serve tab's prompt): any UTF-8, at least 1 and at most max_bytes bytes
    once encoded. The value passed on is the text (str); bytes are the engine's business."""

    name: str
    label: str
    value: str
    max_bytes: int = 512
    info: str = ""
    demo: str | None = None

    def validate(self, value: object) -> str:
        if not isinstance(value, str):
            raise ParamError(f"{self.name} must be text, got {type(value).__name__}")
        n = len(value.encode("utf-8", errors="surrogatepass"))
        if not 1 <= n <= self.max_bytes:
            raise ParamError(f"{self.name} must be 1 to {self.max_bytes} bytes of UTF-8, got {n}")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ParamError(f"{self.name} must be valid UTF-8 text (no lone surrogates)") from None
        return value


@dataclass(frozen=True)
class Check:
    """An on/off control (a checkbox). Accepts only booleans: "false" is not False."""

    name: str
    label: str
    value: bool
    info: str = ""
    demo: bool | None = None

    def validate(self, value: object) -> bool:
        if not isinstance(value, bool):
            raise ParamError(f"{self.name} must be true or false, got {value!r}")
        return value


Control = Slider | Choice | Text | Check


def elem_id(tab_id: str, name: str) -> str:
    """The page element id of a tab's control (the page's script keeps a slider box's value by
    it: tabs/ui_wire.py PASS_ON)."""
    return f"{tab_id}-{name}"


def _num(x: float) -> str:
    """A number as a student typed it: 8, not 8.0; 0.35, not 0.35000000000000003."""
    return f"{x:.10g}"


def validate_all(controls: tuple[Control, ...], values: dict[str, object]) -> dict[str, object]:
    """Validate values by name against their controls; unknown names are an error."""
    by_name = {c.name: c for c in controls}
    unknown = sorted(set(values) - set(by_name))
    if unknown:
        raise ParamError(f"unknown parameter(s) {unknown}; known: {sorted(by_name)}")
    return {name: by_name[name].validate(v) for name, v in values.items()}
