"""StreamDraws: when a streamed run (the Serve tab's Generate) may redraw its figures.

A run's figures take a large share of what a run costs (three figures, 0.4-0.8 s a draw on 2
cores) and hold the interpreter lock while they draw, so a room of pages redrawing at will
starves the engine that is serving them. The rule, for the whole server:

  one draw at a time                   a draw holds the server's draw turn
  at most 1 / share of the wall time   after a draw of t seconds the next may start only
                                       (share - 1) t later, whichever page asks
  a page's own budget                  a page redraws only while its drawing so far plus its
                                       next draw (the last draw's time) stays within 1 / share
                                       of its run's wall time so far
  the last draw                        when its run is done a page waits for its turn under
                                       the server's rule, but not while no run is generating:
                                       a lone page draws its final figures at once

Intermediate draws that are not allowed are skipped (the text still streams); final ones wait.
The text, too, goes out under one rate for the whole server: each page's text at most every
text_every() seconds, the floor for a lone page, longer when many runs generate, so all pages
together send at most `text_rate` updates a second (each costs the server its postprocessing
and a message, ~2-4 ms of the interpreter: 30 pages at the floor cost the engine a core).
When the last open run has drawn its last figures the heap's free pages go back to the system
(core/serve/heap.py): a room's burst leaves its threads' arenas holding tens of MiB.
"""

from __future__ import annotations

import threading
import time

from core.serve.heap import give_back_heap


class StreamDraws:
    def __init__(self, share: float, *, text_floor_s: float = 0.1,
                 text_rate: float = 40.0) -> None:
        if not share > 1:
            raise ValueError(f"share must be > 1, got {share!r}")
        if not text_floor_s >= 0:
            raise ValueError(f"text_floor_s must be >= 0, got {text_floor_s!r}")
        if not text_rate > 0:
            raise ValueError(f"text_rate must be > 0, got {text_rate!r}")
        self.share, self.text_floor_s, self.text_rate = share, text_floor_s, text_rate
        self._cond = threading.Condition()
        self._turn = threading.Lock()
        self._generating = 0
        self._open = 0  # runs started and not yet closed (their last draw included)
        self._next_ok = 0.0  # perf_counter time before which no draw may start
        self.last_s: dict[str, float] = {}  # per tab: the seconds its last draw took

    def started(self) -> None:
        with self._cond:
            self._generating += 1
            self._open += 1

    def finished(self) -> None:
        """The run generates no more (its last draw may follow)."""
        with self._cond:
            self._generating -= 1
            self._cond.notify_all()

    def closed(self) -> None:
        """The run is over, its last draw drawn (or it was stopped)."""
        with self._cond:
            self._open -= 1
            last = self._open == 0
        if last:
            give_back_heap()

    def text_every(self) -> float:
        """Seconds a page waits between two of its text updates now."""
        return max(self.text_floor_s, self._generating / self.text_rate)

    def allowed(self, tab: str, drawn_s: float, elapsed_s: float) -> bool:
        """May this page draw now (an intermediate draw)? If True it holds the turn: call
        drew() after drawing."""
        if drawn_s + self.last_s.get(tab, 1.0) > elapsed_s / self.share:
            return False
        if time.perf_counter() < self._next_ok:
            return False
        return self._turn.acquire(blocking=False)

    def wait_turn(self) -> None:
        """A run's last draw: wait for the server's rule unless nothing is generating; then
        hold the turn (call drew() after drawing). Several pages may wait at once: the one
        that gets the turn after another drew checks the rule again (that draw moved it)."""
        while True:
            with self._cond:
                while self._generating > 0 and (wait := self._next_ok - time.perf_counter()) > 0:
                    self._cond.wait(wait)
            self._turn.acquire()
            if self._generating == 0 or time.perf_counter() >= self._next_ok:
                return
            self._turn.release()

    def drew(self, tab: str, took_s: float) -> None:
        """Release the turn after a draw that took took_s seconds."""
        self.last_s[tab] = took_s
        self._next_ok = time.perf_counter() + (self.share - 1) * took_s
        self._turn.release()
