"""Per-session stores (tabs/sessions.py): a value per browser session, none for API calls, and
one unload forgets a session in every store (presentation mode, a link's mark, draw tickets)
while other sessions keep theirs."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from tabs import newest, opening, present, sessions

pytestmark = pytest.mark.app


def test_a_value_per_session_and_none_for_api_calls():
    store: sessions.SessionStore[int] = sessions.SessionStore()
    me, other = SimpleNamespace(session_hash="s1"), SimpleNamespace(session_hash="s2")
    store.put(me, 1)
    store.put(None, 5)  # an API call stores nothing
    assert (store.get(me, 0), store.get(other, 0), store.get(None, 0)) == (1, 0, 0)
    assert store.change(None, lambda v: (7, "x"), "none") == "none"
    assert store.change(me, lambda v: (None, v), -1) == 1  # None drops the value
    assert store.get(me, 0) == 0 and len(store) == 0


def test_change_is_atomic_across_threads():
    store: sessions.SessionStore[int] = sessions.SessionStore()
    me = SimpleNamespace(session_hash="s3")
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: store.change(me, lambda v: ((v or 0) + 1, None), None),
                      range(2000)))
    assert store.get(me, 0) == 2000
    sessions.forget_all(me)


def test_an_unload_forgets_the_session_in_every_store_and_only_that_session():
    me, other = SimpleNamespace(session_hash="s4"), SimpleNamespace(session_hash="s5")
    for who in (me, other):
        present.set_mode(who, True)
        opening.load_will_draw(who, "paging")
        newest.take(who, ["a"])
    sessions.forget_all(me)
    assert not present.is_on(me) and not opening.select_skips(me, "paging")
    assert all(store.get(me, None) is None for store in sessions._STORES)
    assert present.is_on(other) and opening.select_skips(other, "paging")
    assert newest._NEWEST.get(other, {}).keys() == {"a"}
    sessions.forget_all(other)
