"""A malformed TabSpec is rejected at construction with ParamError naming what is wrong, with
and without `python -O` (which strips asserts: validation by assert would pass silently)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core.errors import ParamError
from tabs.controls import Choice, Slider
from tabs.figure import FigureResult
from tabs.spec import FigureSpec, LiveSpec, Preset, TabSpec

REPO = Path(__file__).resolve().parents[2]


def _draw(**params: object) -> FigureResult:
    raise NotImplementedError


def _slider(name: str, **kw: object) -> Slider:
    return Slider(name=name, label=name.upper(), minimum=0, maximum=3, value=1, **kw)


def _tab(**kw: object) -> TabSpec:
    """A valid tab (two sliders, one figure reading both) with the given fields replaced."""
    fields: dict[str, object] = {
        "id": "t", "title": "T", "controls": (_slider("a"), _slider("b")),
        "figures": (FigureSpec("f", "F", _draw, ("a", "b")),),
    }
    return TabSpec(**{**fields, **kw})


BAD = {
    "one control": ({"controls": (_slider("a"),)}, "2-8 controls, got 1"),
    "duplicate names": ({"controls": (_slider("a"), _slider("a"))},
                        "duplicate control names ['a']"),
    "param without a control": (
        {"figures": (FigureSpec("f", "F", _draw, ("a", "zz")),)}, "params ['zz'] have no control"),
    "hero folded": ({"more": ("a",)}, "the hero a cannot be folded"),
    "more names an unknown control": ({"more": ("zz",)}, "unknown controls ['zz']"),
    "share-link key": ({"controls": (_slider("a"), _slider("tab"))},
                       "control names ['tab'] are share-link keys"),
    "max_from names a choice": (
        {"controls": (Choice("c", "C", ("x", "y"), "x"), _slider("a", max_from="c")),
         "figures": ()}, "a.max_from 'c' must name a slider"),
    "live name taken": ({"live": LiveSpec("f", "F", lambda **_: "", ("a",))},
                        "live f: the name is taken"),
    "every figure folded": ({"folded": ("f",)}, "folded ('f',) must be the tab's last figures"),
    "a middle figure folded": (
        {"figures": (FigureSpec("f", "F", _draw, ("a",)), FigureSpec("g", "G", _draw, ("b",))),
         "folded": ("f",)}, "folded ('f',) must be the tab's last figures"),
    "route after no figure": ({"route_after": "zz"}, "route_after 'zz' names no figure"),
    "duplicate presets": ({"presets": (Preset("p", "", {}), Preset("p", "", {"a": 2}))},
                          "duplicate presets ['p']"),
}


def test_the_valid_tab_is_accepted() -> None:
    assert _tab().hero.name == "a"


@pytest.mark.parametrize("fields, message", BAD.values(), ids=BAD.keys())
def test_a_bad_tab_raises_param_error_naming_the_fault(fields: dict, message: str) -> None:
    with pytest.raises(ParamError) as caught:
        _tab(**fields)
    assert message in str(caught.value)


def test_validation_survives_python_O() -> None:
    """The same checks in an interpreter that strips asserts."""
    probe = (
        "import sys\n"
        "sys.path.insert(0, '.')\n"
        "from core.errors import ParamError\n"
        "from tests.tabs.test_spec_validation import BAD, _tab\n"
        "assert False, 'asserts must be stripped here'\n"
        "for key, (fields, message) in BAD.items():\n"
        "    try:\n"
        "        _tab(**fields)\n"
        "    except ParamError as e:\n"
        "        if message not in str(e):\n"
        "            sys.exit(f'{key}: {e}')\n"
        "    else:\n"
        "        sys.exit(f'{key}: accepted')\n"
        "print('rejected', len(BAD))\n"
    )
    done = subprocess.run([sys.executable, "-O", "-c", probe], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.split() == ["rejected", str(len(BAD))]
