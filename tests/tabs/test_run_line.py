"""RunLine: where a page's Generate stands, counted against a line driven by hand."""

from __future__ import annotations

import pytest

from tabs import run_line
from tabs.run_line import RunLine


def test_pages_wait_in_the_order_they_pressed_and_leave_when_they_start():
    line = RunLine(2)
    assert line.join("a").starts_now
    line.start("a")
    assert line.join("b").starts_now
    line.start("b")
    c, d = line.join("c"), line.join("d")
    assert (c.running, c.ahead, c.starts_now) == (2, 0, False)
    assert (d.running, d.ahead) == (2, 1)
    assert "1 page is ahead of yours" in d.markdown() and "waiting" in d.markdown()
    assert "2 pages are ahead" in line.join("e").markdown()
    assert line.join("d").ahead == 1  # pressing again keeps the place
    line.end()
    line.start("c")
    assert line.join("d").ahead == 0 and line.join("e").ahead == 1
    line.leave("d")  # Stop while waiting
    assert line.join("e").ahead == 0


def test_a_page_that_went_away_drops_out_of_the_line(monkeypatch):
    line = RunLine(1)
    line.start("a")
    now = [100.0]
    monkeypatch.setattr(run_line.time, "monotonic", lambda: now[0])
    line.join("gone")
    now[0] += run_line.STALE_S + 1
    assert line.join("b").ahead == 0


@pytest.mark.parametrize("slots", [0, -1, 1.5, None])
def test_slots_must_be_a_positive_int(slots):
    with pytest.raises(ValueError, match="slots"):
        RunLine(slots)
