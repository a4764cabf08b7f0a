"""RunLine: the pages waiting for a streamed run (the Serve tab's Generate), so that a page says
plainly that its request waits and how many are ahead of it.

Gradio's queue runs `slots` runs at once and holds the rest in order; a page waiting there saw
the previous prompt's output, greyed, under a faint "queue: 2/2", as if its own prompt had
produced it. So Generate first answers at once (an unqueued event) with `join(page)`: the old
text goes and a line says whether the run starts now or waits, and behind how many; the run
itself calls `start(page)` as Gradio starts it and `end()` when it ends; Stop before it
started calls `leave(page)`.

  join(key) -> Waiting    record the page's place (a page joins once; joining again keeps
                          its place) and say where it stands
  start(key) / end()      the run began (the page leaves the line) / ended
  leave(key)              the page stopped waiting (Stop, or a closed page's next join)

A page that closes while waiting never starts: its place is dropped after STALE_S.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

STALE_S = 900.0  # a place older than this is a page that went away


@dataclass(frozen=True, kw_only=True)
class Waiting:
    running: int  # runs in progress when the page joined
    ahead: int  # pages waiting before it
    slots: int  # runs at once

    @property
    def starts_now(self) -> bool:
        return self.running < self.slots and self.ahead == 0

    def markdown(self) -> str:
        if self.starts_now:
            return "**Starting…** your text appears here as it is generated."
        busy = (f"this server generates for {self.slots} pages at a time and all "
                f"{self.slots} are busy" if self.running >= self.slots else
                "the pages ahead of yours start first")
        ahead = ("no other page is ahead of yours" if self.ahead == 0 else
                 f"**{self.ahead} {'page is' if self.ahead == 1 else 'pages are'} ahead of "
                 f"yours**")
        return (f"**Your request is waiting:** {busy}; {ahead}. Your text appears here when "
                f"it starts (Stop leaves the line).")


class RunLine:
    def __init__(self, slots: int) -> None:
        if not (isinstance(slots, int) and slots >= 1):
            raise ValueError(f"slots must be an int >= 1, got {slots!r}")
        self.slots = slots
        self._lock = threading.Lock()
        self._waiting: dict[str, float] = {}  # page -> when it joined (insertion order)
        self._running = 0

    def join(self, key: str) -> Waiting:
        now = time.monotonic()
        with self._lock:
            for k in [k for k, t in self._waiting.items() if now - t > STALE_S]:
                del self._waiting[k]
            self._waiting.setdefault(key, now)
            ahead = list(self._waiting).index(key)
            return Waiting(running=self._running, ahead=ahead, slots=self.slots)

    def start(self, key: str) -> None:
        with self._lock:
            self._waiting.pop(key, None)
            self._running += 1

    def end(self) -> None:
        with self._lock:
            self._running = max(0, self._running - 1)

    def leave(self, key: str) -> None:
        with self._lock:
            self._waiting.pop(key, None)
