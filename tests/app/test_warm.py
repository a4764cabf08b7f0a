"""The background warm-up computes exactly the sweeps the tabs read: afterwards each of those
tabs' first draw is a cache lookup (the same object) and `ready` says so; a failing warmer is
logged, not raised; a page draw of a figure whose sweep is not ready yet first says in its
heading what is being computed (tests/app/test_draw.py)."""

from __future__ import annotations

import logging

import pytest

import tabs.warm as warm
from tabs.registry import REGISTRY

pytestmark = pytest.mark.app


def test_warm_all_fills_the_caches_the_tabs_read():
    took = warm.warm_all()
    assert set(took) == {w.what for w in warm.warmers()}
    for w in warm.warmers():
        assert w.compute() is w.compute()  # cached: the tab's draw gets this very object
        assert w.ready() and warm.waiting(w.figure) is None


def test_each_warmer_names_a_figure_of_the_lab():
    names = {f.name for t in REGISTRY for f in t.figures}
    assert {w.figure for w in warm.warmers()} <= names


def test_a_failing_warmer_is_logged_and_the_rest_still_run(monkeypatch, caplog):
    def boom() -> None:
        raise RuntimeError("no")

    monkeypatch.setattr(warm, "warmers", lambda: (
        warm.Warmer("bad", boom, lambda: False, "x"), warm.Warmer("good", lambda: 1, bool, "y")))
    with caplog.at_level(logging.ERROR, logger="serving_lab"):
        took = warm.warm_all()
    assert list(took) == ["good"] and "warm-up of bad failed" in caplog.text

