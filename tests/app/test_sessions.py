"""Per-session stores (tabs/sessions.py): a value per browser session, none for API calls, and
one unload forgets a session in every store (presentation mode, a link's mark, draw tickets)
while other sessions keep theirs."""

from __future__ import annotations

import sys
import time
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
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible

    def increment(v: int | None) -> tuple[int, None]:
        seen = v or 0
        time.sleep(0)  # yield between the read and the write: without the lock, counts get lost
        return seen + 1, None

    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda _: store.change(me, increment, None), range(2000)))
    finally:
        sys.setswitchinterval(old)
    assert store.get(me, 0) == 2000
    sessions.forget_all(me)


def test_a_store_kept_past_unload_survives_it_and_is_bounded():
    kept: sessions.SessionStore[int] = sessions.SessionStore(on_unload=False, max_sessions=3)
    who = [SimpleNamespace(session_hash=f"k{i}") for i in range(4)]
    kept.put(who[0], 0)
    sessions.forget_all(who[0])
    assert kept.get(who[0], -1) == 0  # a reconnecting page keeps its session
    for i, w in enumerate(who[1:], 1):
        kept.change(w, lambda v, i=i: (i, None), None)
    assert len(kept) == 3 and kept.get(who[0], -1) == -1  # the oldest went first
    assert [kept.get(w, -1) for w in who[1:]] == [1, 2, 3]


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
