"""Control declarations: one source for the widget, its default, and its input validation."""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import ParamError, check_choice, check_float, check_int


@dataclass(frozen=True)
class Slider:
    """A numeric control. `demo` is a second value the browser test moves the slider to.
    `max_from` names another slider whose value is this one's maximum (accepted <= drafted):
    the UI moves this slider down with it, visibly, before redrawing."""

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


Control = Slider | Choice


def validate_all(controls: tuple[Control, ...], values: dict[str, object]) -> dict[str, object]:
    """Validate values by name against their controls; unknown names are an error."""
    by_name = {c.name: c for c in controls}
    unknown = sorted(set(values) - set(by_name))
    if unknown:
        raise ParamError(f"unknown parameter(s) {unknown}; known: {sorted(by_name)}")
    return {name: by_name[name].validate(v) for name, v in values.items()}
