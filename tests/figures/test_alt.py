"""Alt text (tabs/alt.py): every figure's title and key numbers, bounded, readable aloud."""

from __future__ import annotations

import re

import pytest

from tabs.alt import MAX_CHARS, MAX_NUMBERS, alt_text, say_number
from tabs.registry import all_figures
from tabs.spec import render

CASES = all_figures()
DIGIT = re.compile(r"\d")
DECIMAL = re.compile(r"\d[\d,]*\.\d+")

pytestmark = pytest.mark.figures


def _assert_readable(text: str, title: str) -> None:
    assert text and len(text) <= MAX_CHARS, len(text)
    assert text.startswith(title.rstrip(".")), text
    for number in DECIMAL.findall(text):  # no raw floats: at most 4 significant digits
        assert len(number.replace(",", "").replace(".", "").lstrip("0")) <= 4, (number, text)
    assert not re.search(r"\de[+-]?\d", text), text  # no exponent notation


@pytest.mark.parametrize(("tab", "fig"), CASES, ids=[f.name for _, f in CASES])
def test_every_figure_has_readable_alt_text(tab, fig):
    """Each default figure's alt text names it and reads at least one of its numbers."""
    metrics = render(fig, tab).metrics
    text = alt_text(fig.title, metrics)
    _assert_readable(text, fig.title)
    has_number = any(isinstance(v, int | float) and not isinstance(v, bool)
                     for v in metrics.values())
    if has_number:
        assert DIGIT.search(text[len(fig.title):]), text


@pytest.mark.parametrize(("value", "spoken"), [
    (0.0, "0"), (0.0944, "0.0944"), (3.18058, "3.181"), (1.252, "1.252"), (313.0, "313"),
    (27688.0, "27,690"), (88301600.0, "88,300,000"), (-1234.5, "-1,234"),
    (5.72205e-06, "5.72 × 10^-6"), (float("nan"), "not a number"), (float("inf"), "infinity"),
], ids=str)
def test_say_number(value, spoken):
    """Numbers read as a person would say them: 4 significant digits, no exponent notation."""
    assert say_number(value) == spoken


def test_numbers_come_first_and_long_strings_are_skipped():
    metrics = {"sample": "def f(x):\n    return x", "bit_exact": True, "moved_fraction": 0.0944,
               "moved": 3776, "kind": "code"}
    text = alt_text("Removing a cluster", metrics)
    assert text == ("Removing a cluster. Key numbers: moved fraction 0.0944; moved 3,776; "
                    "bit exact yes; kind code.")


def test_bounded_in_count_and_length():
    """Many metrics: at most MAX_NUMBERS of them, within MAX_CHARS; a huge title is cut."""
    metrics = {f"metric_number_{i}_with_a_long_descriptive_name": i * 1.5 for i in range(40)}
    text = alt_text("A figure", metrics)
    assert text.count(";") == MAX_NUMBERS - 1 and len(text) <= MAX_CHARS
    long_keys = {"x" * 150 + str(i): i for i in range(5)}
    text = alt_text("A figure", long_keys)
    assert len(text) <= MAX_CHARS and text.count(";") == 1  # only two 150-char names fit
    assert len(alt_text("T" * 1000, {"a": 1})) == MAX_CHARS


def test_no_metrics_is_just_the_title():
    assert alt_text("  Ring layout\n and shares ", {}) == "Ring layout and shares."
