"""The background warm-up computes exactly the sweeps the tabs read: afterwards each of those
tabs' first draw is a cache lookup (the same object), and a failing warmer is logged, not
raised."""

from __future__ import annotations

import logging

import pytest

import tabs.warm as warm

pytestmark = pytest.mark.app


def test_warm_all_fills_the_caches_the_tabs_read():
    took = warm.warm_all()
    assert set(took) == {what for what, _ in warm.warmers()}
    for _, compute in warm.warmers():
        assert compute() is compute()  # cached: the tab's draw gets this very object


def test_a_failing_warmer_is_logged_and_the_rest_still_run(monkeypatch, caplog):
    def boom() -> None:
        raise RuntimeError("no")

    monkeypatch.setattr(warm, "warmers", lambda: (("bad", boom), ("good", lambda: 1)))
    with caplog.at_level(logging.ERROR, logger="serving_lab"):
        took = warm.warm_all()
    assert list(took) == ["good"] and "warm-up of bad failed" in caplog.text
