"""A shared link's tab is drawn once: by the page load. The select event the load causes is
skipped whenever it arrives (under load it can wait in the queue until after the load's draw,
carrying the values from before the link's were applied); every later select draws; other
tabs, other sessions and API calls are unaffected; a run tab skips its text and its figures."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tabs import opening, sessions

pytestmark = pytest.mark.app


def test_the_select_the_load_caused_is_skipped_once_whenever_it_arrives():
    me, other = SimpleNamespace(session_hash="a"), SimpleNamespace(session_hash="b")
    opening.load_will_draw(me, "paging")
    assert not opening.select_skips(me, "model")  # another tab draws on select
    assert not opening.select_skips(other, "paging")  # another session draws on select
    assert not opening.select_skips(None, "paging")  # an API call has no session
    assert opening.select_skips(me, "paging")  # the load's own select, even after its draw
    assert not opening.select_skips(me, "paging")  # a later click draws


def test_a_run_tab_skips_its_text_and_its_figures_once_each():
    me = SimpleNamespace(session_hash="c")
    opening.load_will_draw(me, "serve", ("figures", "run"))
    assert opening.select_skips(me, "serve", "run")
    assert opening.select_skips(me, "serve", "figures")
    assert not opening.select_skips(me, "serve", "figures")
    assert not opening.select_skips(me, "serve", "run")


def test_an_unloaded_page_forgets_its_mark():
    me = SimpleNamespace(session_hash="d")
    opening.load_will_draw(me, "paging")
    sessions.forget_all(me)
    assert not opening.select_skips(me, "paging")
