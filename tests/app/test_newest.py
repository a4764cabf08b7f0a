"""The newest draw of a figure wins, per browser session (tabs/newest.py): an older draw still
running when a newer one claims a figure leaves that figure to it, and still draws the figures
the newer one does not cover; other sessions and API calls are unaffected."""

from __future__ import annotations

from types import SimpleNamespace

import gradio as gr
import pytest

from tabs import newest, sessions
from tabs.registry import REGISTRY
from tabs.ui_draw import _drawers, draw_all, union_params

pytestmark = pytest.mark.app

TAB = next(t for t in REGISTRY if len(t.figures) >= 2 and t.run is None)
F1, F2 = TAB.figures[:2]


def _values(figs) -> list[object]:
    d = TAB.defaults()
    return [d[p] for p in union_params(figs)]


def _shown(row: list[object]) -> list[bool]:
    """Per figure of the row: was it sent (not a skip)?"""
    return [not (isinstance(x, dict) and x.get("__type__") == "update" and len(x) == 1)
            for x in row[0::3]]


def test_a_newer_claim_makes_the_older_one_stale_for_that_figure_only():
    me, other = SimpleNamespace(session_hash="n1"), SimpleNamespace(session_hash="n2")
    old = newest.take(me, ["a", "b"])
    theirs = newest.take(other, ["a"])
    assert old.current("a") and old.current("b") and theirs.current("a")
    new = newest.take(me, ["a"])
    assert not old.current("a") and old.current("b") and new.current("a")
    assert theirs.current("a")  # another session's draws are its own
    assert newest.take(None, ["a"]).current("a")  # an API call always draws
    sessions.forget_all(me)
    sessions.forget_all(other)


def test_an_older_draw_leaves_a_claimed_figure_to_the_newer_draw():
    me = SimpleNamespace(session_hash="n3")
    both = (F1, F2)
    older = _drawers(both, TAB)(me, *_values(both))
    first = next(older)  # the older draw has started and shown F1
    assert _shown(first) == [True, False]
    newer = _drawers((F2,), TAB)(me, *_values((F2,)))
    assert _shown(next(newer)) == [True]  # the newer draw claims and shows F2
    assert list(older) == []  # F2 was claimed after the older draw started: not shown by it
    sessions.forget_all(me)


def _claimed_right_after(monkeypatch, names: list[str]) -> None:
    """Every draw that starts is overtaken at once by a newer draw claiming `names`."""
    real = newest.take

    def take_then_claim(request, claimed):
        t = real(request, claimed)
        real(request, names)
        return t

    monkeypatch.setattr(newest, "take", take_then_claim)


def test_a_draw_whose_every_figure_was_claimed_yields_one_row_of_skips(monkeypatch):
    me = SimpleNamespace(session_hash="n4")
    _claimed_right_after(monkeypatch, [F1.name])
    rows = list(_drawers((F1,), TAB)(me, *_values((F1,))))
    assert rows == [[gr.skip()] * 3]  # one row, so Gradio never blanks the figure
    sessions.forget_all(me)


def test_reset_and_presets_skip_a_figure_a_newer_draw_claimed(monkeypatch):
    me = SimpleNamespace(session_hash="n5")
    _claimed_right_after(monkeypatch, [F1.name])  # a slider's draw, right after reset starts
    out = draw_all(TAB, TAB.defaults(), me)
    assert out[0:3] == [gr.skip()] * 3 and _shown(out)[1]
    sessions.forget_all(me)
