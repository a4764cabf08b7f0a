"""The event log's `since` reads from the newest end; its slow twin scans the whole log. They
agree for any log length, capacity and cursor, before and after the log wraps."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.experts.events import EventLog


@given(capacity=st.integers(1, 40), n_events=st.integers(0, 120), seq=st.integers(-5, 130))
def test_since_equals_the_full_scan(capacity: int, n_events: int, seq: int) -> None:
    log = EventLog(capacity)
    for i in range(n_events):
        log.add("miss", layer=i % 3, expert=i)
    got = log.since(seq)
    assert got == log.since_reference(seq)
    assert [e.seq for e in got] == sorted(e.seq for e in got)  # oldest first


def test_a_cursor_reads_only_what_happened_since() -> None:
    log = EventLog(8)
    for i in range(5):
        log.add("miss", expert=i)
    cursor = log.seq
    log.add("evict", expert=9)
    assert [(e.seq, e.op) for e in log.since(cursor)] == [(6, "evict")]
    assert log.since(log.seq) == ()
