"""A page whose connection drops keeps working when it comes back. When the page's heartbeat
ends, the server runs Gradio's unload and closes the session (its state kept for an hour), while
the page keeps its session hash and goes on sending events under it. Once, a per-session mark
forgotten at that moment made the page's next click on its first tab draw nothing (commit
a072579); per-session values now live in Gradio's own session state.

Checked, after the server has closed the session, for a blip with nothing in flight: the page
carries on in the same session; a control on the first tab redraws its figure, another tab
draws when opened, Reset on the first tab draws its defaults.

Not checked here: a blip while a draw streams. Gradio's page then marks the connection lost,
stops sending events, asks the server every 2 s whether it is back and reloads itself
(Blocks-*.js `connection_lost`); the reload opens the view last drawn (the second test). That
reload happened in every quiet run here, but on a loaded machine the draw's result could
instead be lost with its stream while the page waited on another, with no reload, so a test
of it would be flaky: it is in the issue's notes as work to do."""

from __future__ import annotations

import re

import pytest

from tests.e2e.proxy import Proxy

pytestmark = pytest.mark.e2e

IMG = "#{}-plot [data-testid=matplotlib] img"
NEW_IMAGE = "([s, b]) => { const i = document.querySelector(s); return i && i.src !== b; }"


def _redrawn(page, fig: str, before: str | None) -> None:
    page.wait_for_function(NEW_IMAGE, arg=[IMG.format(fig), before], timeout=60_000)


class InFlight:
    """The page's event requests (queue joins and result streams, quick predicts) still open."""

    def __init__(self, page) -> None:
        self.open: set[object] = set()
        page.on("request", lambda r: self.open.add(r) if self._event(r) else None)
        page.on("requestfinished", lambda r: self.open.discard(r))
        page.on("requestfailed", lambda r: self.open.discard(r))

    @staticmethod
    def _event(r) -> bool:
        return any(p in r.url for p in ("/queue/join", "/queue/data", "/run/predict"))

    def settle(self, page, demo) -> None:
        """Until nothing has been open for half a second (60 s at most). A timeout says what
        the server's queue held (seen once in a full run: the page's result stream open 60 s
        after its tab had drawn, cause not found)."""
        quiet = 0
        for _ in range(600):
            quiet = quiet + 1 if not self.open else 0
            if quiet == 5:
                return
            page.wait_for_timeout(100)
        raise AssertionError(f"events still open after 60 s: {[r.url for r in self.open]}; "
                             f"the server's queue: {_queue_state(demo)}")


def _queue_state(demo) -> str:
    """Per concurrency group with work: (running, waiting, the waiting events' functions)."""
    q = demo._queue
    return str({cid: (eq.current_concurrency, len(eq.queue), [e.fn.name for e in eq.queue][:8])
                for cid, eq in q.event_queue_per_concurrency_id.items()
                if eq.current_concurrency or eq.queue})


def _closed(page, sessions, session: str) -> None:
    """Wait for the server to see the page's heartbeat end (unload run, session closed)."""
    for _ in range(150):
        if sessions[session].is_closed:
            return
        page.wait_for_timeout(100)
    raise AssertionError("the server never saw the page's connection drop")


def test_a_page_whose_connection_dropped_still_draws(page, app_demo, monkeypatch):
    # the server notices a dropped page at its next heartbeat (15 s by default)
    monkeypatch.setenv("GRADIO_HEARTBEAT_INTERVAL", "0.5")
    proxy = Proxy(int(re.search(r":(\d+)", app_demo.local_url).group(1)))
    hearts: list[str] = []
    page.on("request", lambda r: hearts.append(r.url) if "/heartbeat/" in r.url else None)
    sessions = app_demo.server_app.state_holder.session_data
    events = InFlight(page)
    try:
        page.goto(f"http://127.0.0.1:{proxy.port}/?tab=paging")
        page.locator(IMG.format("paging_ledger")).wait_for(timeout=60_000)  # the tab's last
        events.settle(page, app_demo)  # nothing in flight
        session = hearts[0].rsplit("/", 1)[1]
        assert not sessions[session].is_closed

        # idle blip: the same page and session carry on
        proxy.cut()
        _closed(page, sessions, session)
        before = page.locator(IMG.format("paging_growth")).get_attribute("src")
        box = page.locator("#paging-seq_len input[type=number]")
        box.fill("300")
        box.press("Enter")
        _redrawn(page, "paging_growth", before)
        page.get_by_role("tab", name="Expert cache").click()
        page.locator(IMG.format("cache_hit_rates")).wait_for(timeout=60_000)
        page.get_by_role("tab", name="Page pool").click()
        before = page.locator(IMG.format("paging_growth")).get_attribute("src")
        page.locator("#paging-reset").click()
        _redrawn(page, "paging_growth", before)
        assert box.input_value() == "160" and len(hearts) == 1  # no new page, no new session

    finally:
        proxy.close()


def test_a_reload_opens_the_view_last_drawn(page, app_url):
    """Gradio's page reloads itself after a lost connection once the server answers (above),
    and a student may reload too: either way the page opens what it last drew, not the address
    it was first opened with. Opening an address (not a reload) still opens that address."""
    page.goto(f"{app_url}?tab=paging")
    growth = IMG.format("paging_growth")
    page.locator(growth).wait_for(timeout=60_000)
    before = page.locator(growth).get_attribute("src")
    box = page.locator("#paging-seq_len input[type=number]")
    box.fill("300")
    box.press("Enter")
    _redrawn(page, "paging_growth", before)
    drawn = page.locator(growth).get_attribute("src")

    page.reload()
    page.locator(growth).wait_for(timeout=60_000)
    page.wait_for_function("([s, src]) => document.querySelector(s).src === src",
                           arg=[growth, drawn], timeout=60_000)  # the figure for 300
    assert box.input_value() == "300" and "seq_len=300" in page.url

    page.goto(f"{app_url}?tab=paging")  # an address: its own view, the defaults
    page.locator(growth).wait_for(timeout=60_000)
    page.wait_for_function("([s, src]) => document.querySelector(s).src === src",
                           arg=[growth, before], timeout=60_000)
    assert box.input_value() == "160"
