"""The class guide (assets/class_guide.md, shown by the lab and linked by the README) names the
lab as it is: its route covers every tab but the ones it says it leaves out, in the tab bar's
order, over 50 contiguous minutes; every preset or control it tells the lecturer to use exists
on that tab; its commands are the README's and the app's."""

from __future__ import annotations

import re

import pytest

from app import CLASS_GUIDE, main
from tabs.registry import REGISTRY
from tests.conftest import REPO

pytestmark = pytest.mark.app

GUIDE = CLASS_GUIDE.read_text(encoding="utf-8")
BY_TITLE = {t.title: t for t in REGISTRY}


def _route() -> list[tuple[int, int, list[str], str]]:
    rows = re.findall(r"^\| (\d+)-(\d+) \| ([^|]+) \| ([^|]+) \|$", GUIDE, re.M)
    return [(int(a), int(b), [s.strip() for s in tabs.split(",")], show)
            for a, b, tabs, show in rows]


def test_the_route_is_50_contiguous_minutes_in_tab_order():
    route = _route()
    assert route and route[0][0] == 0 and route[-1][1] == 50
    assert all(prev[1] == nxt[0] for prev, nxt in zip(route, route[1:], strict=False))
    order = [REGISTRY.index(BY_TITLE[t]) for _, _, tabs, _ in route for t in tabs]
    assert order == sorted(order)


def test_every_tab_is_on_the_route_or_named_as_left_out():
    on_route = {t for _, _, tabs, _ in _route() for t in tabs}
    left_out = set(BY_TITLE) - on_route
    assert left_out == {"Replay ring"}
    assert all(f"{t} is for a longer class" in GUIDE for t in left_out)


def test_what_it_tells_the_lecturer_to_press_exists():
    for _, _, titles, show in _route():
        names = {p.name for t in titles for p in BY_TITLE[t].presets}
        names |= {c.label for t in titles for c in BY_TITLE[t].controls}
        for asked in re.findall(r"\*([^*]+)\*", show):
            assert asked in names, f"{titles}: no preset or control {asked!r}"


def test_the_prompts_it_recommends_are_serve_presets():
    serve = {p.name for p in BY_TITLE["Serve"].presets}
    section = GUIDE.split("**Prompts the model continues visibly**")[1].split("**Limits")[0]
    named = re.findall(r"\*([^*]+)\*", section)
    assert named and set(named) <= serve


def test_its_commands_are_the_lab_s(capsys):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for cmd in re.findall(r"`(pip install -r [^`]+)`", GUIDE):
        assert cmd in readme
    assert "assets/class_guide.md" in readme
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    usage = capsys.readouterr().out
    for flag in re.findall(r"`python app\.py ([^`]*)`", GUIDE):
        for word in flag.split():
            assert not word.startswith("--") or word in usage, word
