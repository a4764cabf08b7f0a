"""A shared link's tab is drawn once: by the page load; its select event skips it meanwhile,
other tabs and other sessions are unaffected, and once the load has drawn, a select draws."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tabs import opening

pytestmark = pytest.mark.app


def test_the_loads_tab_skips_its_select_until_the_load_has_drawn():
    me, other = SimpleNamespace(session_hash="a"), SimpleNamespace(session_hash="b")
    opening.load_will_draw(me, "paging")
    assert opening.select_skips(me, "paging")
    assert not opening.select_skips(me, "model")  # another tab draws on select
    assert not opening.select_skips(other, "paging")  # another session draws on select
    opening.load_drew(me)
    assert not opening.select_skips(me, "paging")  # a later click draws
    assert not opening.select_skips(None, "paging")  # an API call has no session
