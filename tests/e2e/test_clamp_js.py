"""The page's clamp step runs in the browser as JavaScript (tabs/clamp.py clamp_js); it must do
exactly what the Python specification does (clamp_reference, built on Slider.clamp), for
every slider of the lab with its real source and followers, on values a student can type:
in range, between steps, far outside, empty (null), NaN. Compared in chromium, exactly: the
same values, the same follower updates, the same note text."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tabs.clamp import clamp_js_core, clamp_reference
from tabs.controls import Slider
from tabs.registry import REGISTRY

pytestmark = pytest.mark.e2e

CASES = [(t, c) for t in REGISTRY for c in t.controls if isinstance(c, Slider)]
# Notes print numbers as f"{x:.10g}"; above 1e9 a tie in the 10th digit may round differently
# (tabs/clamp.py), so typed values stay within it.
TYPED = 1e9


def _typed(c: Slider) -> st.SearchStrategy:
    near_grid = st.builds(lambda k, eps: c.minimum + k * c.step + eps,
                          st.integers(-3, int((c.maximum - c.minimum) / c.step) + 3),
                          st.sampled_from([0.0, 1e-12, -1e-12, 1e-7, 3e-5, c.step / 2,
                                           -c.step / 3]))
    return st.one_of(near_grid, st.floats(-TYPED, TYPED), st.floats(-1e-3, 1e-3),
                     st.integers(-10**6, 10**6),
                     st.sampled_from([None, math.nan, c.maximum + 1, c.minimum - 1]))


@st.composite
def _case(draw):
    tab, c = draw(st.sampled_from(CASES))
    source = tab.control(c.max_from) if c.max_from else None
    followers = tab.followers(c.name)
    rows = []
    for _ in range(draw(st.integers(1, 8))):
        rest = [draw(_typed(source))] if source else []
        rest += [draw(_typed(d)) for d in followers]
        shown = [draw(st.one_of(st.none(), st.integers(int(d.minimum), int(d.maximum))))
                 for d in followers]
        rows.append((draw(_typed(c)), rest, shown))
    return c, source, followers, rows


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=_case())
def test_browser_clamp_equals_the_python_specification(page, case):
    c, source, followers, rows = case
    got = page.evaluate(f"(rows) => rows.map(([raw, rest, shown]) => "
                        f"({clamp_js_core(c, source, followers)})(raw, rest, shown))",
                        [list(r) for r in rows])
    ref = clamp_reference(c, source, followers)
    for (raw, rest, shown), js in zip(rows, got, strict=True):
        assert js == ref(raw, *rest, *shown), (c.name, raw, rest, shown)


def test_every_slider_is_covered():
    assert {c.name for _, c in CASES} >= {"draft_len", "accepted", "topk", "slots", "step"}
