"""StreamDraws (tabs/stream_draws.py): the server-wide rule for a streamed run's redraws.

Pinned with a share of 5 and draws of a known length: after a draw of t seconds no page may
start another for 4 t; a page over its own budget may not draw however long the server has
been idle; one draw at a time; a run's last draw waits for the rule while another run is
generating, and not at all once none is.
"""

from __future__ import annotations

import threading
import time

import pytest

from tabs.stream_draws import StreamDraws

T = 0.05  # the draw's length the tests pretend


def test_after_a_draw_the_server_waits_share_minus_one_times_it():
    d = StreamDraws(5)
    assert d.allowed("a", 0.0, 10.0)
    d.drew("a", T)
    t0 = time.perf_counter()
    assert not d.allowed("b", 0.0, 10.0), "another page drew within the gap"
    while not d.allowed("b", 0.0, 10.0):
        time.sleep(0.005)
    assert time.perf_counter() - t0 >= 4 * T * 0.9
    assert not d.allowed("c", 0.0, 10.0), "two draws at once"
    d.drew("b", T)


def test_a_page_over_its_own_budget_does_not_draw():
    d = StreamDraws(5)
    d.last_s["a"] = 0.5
    assert not d.allowed("a", 0.0, 2.0)  # 0.5 > 2.0 / 5
    assert d.allowed("a", 0.0, 3.0)  # 0.5 <= 3.0 / 5
    d.drew("a", 0.0)


def test_the_last_draw_waits_only_while_a_run_generates():
    d = StreamDraws(5)
    d.started()  # another page's run
    assert d.allowed("a", 0.0, 10.0)
    d.drew("a", T)
    t0 = time.perf_counter()
    d.wait_turn()
    assert time.perf_counter() - t0 >= 4 * T * 0.9
    d.drew("a", 10.0)  # a long draw: without a run generating, the next need not wait
    d.finished()
    t0 = time.perf_counter()
    done = threading.Event()
    threading.Thread(target=lambda: (d.wait_turn(), done.set()), daemon=True).start()
    assert done.wait(2.0), "a last draw waited with no run generating"
    d.drew("a", 0.0)


def test_last_draws_waiting_together_still_keep_the_gap_between_them():
    """Two pages' last draws wait while a third page generates: when the gap after a draw
    ends, one of them draws; the other must then wait the gap after that draw too, not take
    the turn the moment the first lets it go."""
    d = StreamDraws(5)
    d.started()  # the page still generating
    assert d.allowed("a", 0.0, 10.0)
    d.drew("a", T)
    drew_at: list[float] = []

    def last_draw() -> None:
        d.wait_turn()
        drew_at.append(time.perf_counter())
        time.sleep(T)
        d.drew("a", T)

    threads = [threading.Thread(target=last_draw, daemon=True) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10.0)
    assert len(drew_at) == 2
    first, second = sorted(drew_at)
    assert second - first >= (T + 4 * T) * 0.9, "the second took the turn with no gap"
    d.finished()


def test_finished_wakes_a_waiting_last_draw():
    d = StreamDraws(5)
    d.started()
    d.allowed("a", 0.0, 100.0)
    d.drew("a", 30.0)  # the rule alone would hold the next draw for 2 minutes
    done = threading.Event()
    threading.Thread(target=lambda: (d.wait_turn(), done.set()), daemon=True).start()
    assert not done.wait(0.1)
    d.finished()
    assert done.wait(2.0)


@pytest.mark.parametrize("share", [1, 0.5, -2])
def test_share_must_exceed_one(share):
    with pytest.raises(ValueError, match="share must be > 1"):
        StreamDraws(share)


def test_the_heap_goes_back_when_the_last_open_run_closes(monkeypatch):
    import tabs.stream_draws as sd

    calls: list[int] = []
    monkeypatch.setattr(sd, "give_back_heap", lambda: calls.append(1))
    d = StreamDraws(5)
    d.started()
    d.started()
    d.finished()
    d.closed()
    assert calls == [], "a run was still open"
    d.finished()
    d.closed()
    assert calls == [1]


def test_text_goes_out_at_the_floor_alone_and_at_the_servers_rate_together():
    """One generating run: its text every text_floor_s. n runs: every n / text_rate s each,
    so all of them together send text_rate updates a second; a run that finishes gives its
    share back."""
    d = StreamDraws(5, text_floor_s=0.1, text_rate=40.0)
    d.started()
    assert d.text_every() == pytest.approx(0.1)
    for _ in range(29):
        d.started()
    assert d.text_every() == pytest.approx(30 / 40.0)
    assert 30 / d.text_every() == pytest.approx(40.0)
    for _ in range(26):
        d.finished()
    assert d.text_every() == pytest.approx(0.1)  # 4 / 40 is the floor itself


@pytest.mark.parametrize("kwargs", [{"text_floor_s": -0.1}, {"text_rate": 0.0}])
def test_bad_text_knobs_are_refused_by_name(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        StreamDraws(5, **kwargs)
