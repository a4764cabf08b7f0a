"""Input validation shared by the engine: bad input names the parameter and its allowed range."""

from __future__ import annotations

import numbers
from collections.abc import Iterable


class ParamError(ValueError):
    """A parameter outside its allowed range; the message names both."""


def check_int(name: str, value: object, lo: int, hi: int | None = None) -> int:
    """Return value as int if it is an integer in [lo, hi] (hi=None: no upper bound), else raise."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int,))
        and not (isinstance(value, float) and value.is_integer())
    ):
        raise ParamError(f"{name} must be an integer in {_range(lo, hi)}, got {value!r}")
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        raise ParamError(f"{name} must be in {_range(lo, hi)}, got {v}")
    return v


def check_float(name: str, value: object, lo: float, hi: float) -> float:
    """Return value as float if it is a real number (not a bool, not text) in [lo, hi], else
    raise ParamError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParamError(f"{name} must be a number in [{lo}, {hi}], got {value!r}")
    v = float(value)
    if not (lo <= v <= hi):
        raise ParamError(f"{name} must be in [{lo}, {hi}], got {v}")
    return v


def check_choice(name: str, value: object, choices: Iterable[object]) -> object:
    """Return value if it is one of choices, else raise ParamError listing them."""
    options = list(choices)
    if value not in options:
        raise ParamError(f"{name} must be one of {options}, got {value!r}")
    return value


def _range(lo: int, hi: int | None) -> str:
    return f"[{lo}, {hi}]" if hi is not None else f"[{lo}, inf)"
