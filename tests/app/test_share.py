"""Share links: link_query writes the tab and non-default controls; parse_query reads them
back exactly, and falls back to defaults (with a note) for anything it cannot honour."""

from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

from tabs.controls import Check, Choice, Slider, Text
from tabs.registry import REGISTRY
from tabs.share import link_query, parse_query


def _non_default(c) -> object:
    if isinstance(c, Slider):
        v = c.demo if c.demo is not None and c.demo != c.value else (
            c.minimum if c.minimum != c.value else c.maximum)
        return int(v) if c.integer else v
    if isinstance(c, Choice):
        return next(x for x in c.choices if x != c.value)
    if isinstance(c, Check):
        return not c.value
    assert isinstance(c, Text)
    return "é & ?=" + c.value[:10]


@pytest.mark.parametrize("tab", REGISTRY, ids=[t.id for t in REGISTRY])
def test_round_trip_every_control(tab):
    for c in tab.controls:
        values = {**tab.defaults(), c.name: _non_default(c)}
        query = link_query(tab, values)
        r = parse_query(dict(parse_qsl(query)))
        assert r.tab is tab and r.notes == ()
        assert r.values == values, (c.name, query)
        assert f"{c.name}=" in query and query.startswith(f"tab={tab.id}")


def test_defaults_make_a_short_link():
    tab = REGISTRY[1]
    assert link_query(tab, tab.defaults()) == f"tab={tab.id}"


@pytest.mark.parametrize(("query", "note"), [
    ({"tab": "nope"}, "There is no tab 'nope'"),
    ({"tab": REGISTRY[0].id, "bogus": "1"}, "has no control 'bogus'"),
    ({"tab": REGISTRY[0].id, REGISTRY[0].hero.name: "99999"}, REGISTRY[0].hero.name),
    ({"tab": REGISTRY[0].id, REGISTRY[0].hero.name: "nan"}, REGISTRY[0].hero.name),
    ({"tab": REGISTRY[0].id, REGISTRY[0].hero.name: "abc"}, "is not a number"),
])
def test_bad_queries_fall_back_to_defaults_with_a_note(query, note):
    r = parse_query(query)
    assert any(note in n for n in r.notes), r.notes
    assert r.values == r.tab.defaults()


def test_gradio_keys_are_not_complaints():
    assert parse_query({"__theme": "dark"}).notes == ()


@pytest.mark.parametrize(("raw", "on", "noted"), [("1", True, False), ("true", True, False),
                                                   ("0", False, False), ("maybe", False, True)])
def test_present_flag_is_ours_not_a_complaint(raw, on, noted):
    r = parse_query({"tab": REGISTRY[0].id, "present": raw})
    assert r.present is on
    assert any("present must be 1 or 0" in n for n in r.notes) is noted
    assert r.values == r.tab.defaults()
