"""Alt text for a figure: its title and its first key numbers, short enough to be read aloud."""

from __future__ import annotations

import math
from collections.abc import Mapping

from tabs.figure import MetricValue

MAX_CHARS = 400  # a screen reader reads all of it; longer is a table, not alt text
MAX_NUMBERS = 5
MAX_STR = 24  # string metrics longer than this (samples, slot lists) are not read
SIG_DIGITS = 4


def say_number(v: float) -> str:
    """A number as a person would read it: 4 significant digits, thousands separators, no
    exponent notation above 1e-3 ('1,235,000', '0.0944', '3.181'); tiny ones as '5.72 × 10^-6'."""
    if math.isnan(v):
        return "not a number"
    if math.isinf(v):
        return "infinity" if v > 0 else "minus infinity"
    if v == 0:
        return "0"
    if abs(v) < 1e-3:
        exp = math.floor(math.log10(abs(v)))
        return f"{v / 10**exp:.3g} × 10^{exp}"
    rounded = float(f"{v:.{SIG_DIGITS}g}")
    if abs(rounded) >= 10 ** (SIG_DIGITS - 1):
        return f"{round(rounded):,}"
    return f"{rounded:.{SIG_DIGITS}g}"


def _say(v: MetricValue) -> str | None:
    """The spoken value, or None for a value not worth reading (a long or multi-line string)."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return say_number(v)
    text = str(v).strip()
    return text if text and len(text) <= MAX_STR and "\n" not in text else None


def _words(key: str) -> str:
    return " ".join("percent" if w == "pct" else w for w in key.split("_") if w)


def _is_number(v: MetricValue) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def alt_text(title: str, metrics: Mapping[str, MetricValue]) -> str:
    """The title, then up to MAX_NUMBERS metrics in the figure's own order, numbers before
    flags and labels; never longer than MAX_CHARS."""
    head = " ".join(title.split()).rstrip(".")
    if len(head) + 1 > MAX_CHARS:
        return head[: MAX_CHARS - 1] + "…"
    head += "."
    ordered = [k for k in metrics if _is_number(metrics[k])]
    ordered += [k for k in metrics if not _is_number(metrics[k])]
    parts: list[str] = []
    for key in ordered:
        said = _say(metrics[key])
        if said is None:
            continue
        text = f"{head} Key numbers: {'; '.join([*parts, f'{_words(key)} {said}'])}."
        if len(text) > MAX_CHARS:
            break
        parts.append(f"{_words(key)} {said}")
        if len(parts) == MAX_NUMBERS:
            break
    return f"{head} Key numbers: {'; '.join(parts)}." if parts else head
