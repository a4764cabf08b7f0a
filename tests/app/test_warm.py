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



def test_the_lecture_is_every_tab_at_its_defaults_then_each_preset_in_registry_order():
    want = [(t.id, f.name, tuple(sorted({**t.defaults(), **vals}.items())))
            for t in REGISTRY for vals in ({}, *(p.values for p in t.presets))
            for f in t.figures]
    got = [(t.id, f.name, tuple(sorted(v.items()))) for t, f, v in warm.lecture()]
    assert got == want


def test_prerender_fills_the_shared_cache_a_page_then_hits(monkeypatch, caplog):
    from tabs.render_cache import RENDERS, key, rendered
    from tabs.spec import validated

    few = [x for x in warm.lecture() if x[0].id == "kda_replay"][:2]
    tab, fig, values = few[0]
    broken = (tab, fig, {**values, fig.params[0]: "not a value"})
    monkeypatch.setattr(warm, "lecture", lambda: [*few, broken])
    RENDERS.clear()
    with caplog.at_level(logging.ERROR, logger="serving_lab"):
        done, _ = warm.prerender_lecture()
    assert done == 2 and f"pre-rendering {fig.name} failed" in caplog.text
    for t, f, v in few:
        assert key(f, validated(f.params, t, v), False) in RENDERS
    before = RENDERS.stats()
    rendered(fig, tab, values)
    after = RENDERS.stats()
    assert (after.hits - before.hits, after.misses - before.misses) == (1, 0)
    RENDERS.clear()
