"""A page's shown tab is drawn once: by the page load. The select the page's mount fires for
the first tab draws nothing, and so does the select the load causes on a link's tab, whenever
it arrives (under load it can wait in the queue until after the load's draw, carrying the
values from before the link's were applied); every later select draws; other tabs, other
sessions and API calls are unaffected; a run tab skips its text and its figures."""

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


def test_the_mount_select_of_the_first_tab_is_skipped_once_per_session():
    me, other = SimpleNamespace(session_hash="e"), SimpleNamespace(session_hash="f")
    first = opening.MOUNT_TAB
    assert not opening.select_skips(me, "paging")  # only the first tab's
    assert opening.select_skips(me, first)  # the mount's: the load draws the tab shown
    assert not opening.select_skips(me, first)  # a student's return to it draws
    assert opening.select_skips(other, first)  # every page mounts
    assert not opening.select_skips(None, first)  # an API call always draws
    sessions.forget_all(me)
    sessions.forget_all(other)


def test_a_link_to_another_tab_skips_the_mount_and_the_links_select():
    me = SimpleNamespace(session_hash="g")
    opening.load_will_draw(me, "paging")
    assert opening.select_skips(me, opening.MOUNT_TAB)
    assert opening.select_skips(me, "paging")
    assert not opening.select_skips(me, opening.MOUNT_TAB)  # the student clicks back: drawn
    assert not opening.select_skips(me, "paging")
    sessions.forget_all(me)


def test_a_page_that_reconnects_keeps_its_mount_so_the_first_tab_still_draws():
    me = SimpleNamespace(session_hash="h")
    assert opening.select_skips(me, opening.MOUNT_TAB)  # the mount's
    sessions.forget_all(me)  # the heartbeat dropped; the page reconnects with the same hash
    assert not opening.select_skips(me, opening.MOUNT_TAB)  # the student's click draws
