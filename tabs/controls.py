"""Control declarations: one source for the widget, its default, and its input validation."""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import ParamError, check_choice, check_float, check_int


@dataclass(frozen=True)
class Slider:
    """A numeric control. `demo` is a second value the browser test moves the slider to.
    `max_from` names another slider whose value plus `max_offset` is this one's maximum
    (accepted <= drafted; top-k <= slots - 1): the UI moves this slider down with it, visibly,
    before redrawing."""

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

    def max_given(self, source: float) -> float:
        """This slider's maximum when its max_from source is at `source`."""
        return min(self.maximum, source + self.max_offset)

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


def validate_all(controls: tuple[Control, ...], values: dict[str, object]) -> dict[str, object]:
    """Validate values by name against their controls; unknown names are an error."""
    by_name = {c.name: c for c in controls}
    unknown = sorted(set(values) - set(by_name))
    if unknown:
        raise ParamError(f"unknown parameter(s) {unknown}; known: {sorted(by_name)}")
    return {name: by_name[name].validate(v) for name, v in values.items()}
