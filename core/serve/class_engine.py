"""ClassEngine: one continuous-batching Engine serving a whole room, stepped by one thread.

  seat()                      a new seat (one per browser session); its key is the server's
  serve(seat, cfg)            queue the seat's request and follow it: ServeSnapshots of its
                              own text and counts (RunView, every `cfg.every` bytes and at the
                              end), each with the room's counts (RoomView); closing the
                              iterator early (Stop, a closed page) cancels the request at once
  cancel(seat)                retire the seat's request, if any (pages back, nothing published
                              that was not committed)
  room() / close()            the room's counts now; stop the thread and the expert cache

Rules: one request in flight per seat (a second `serve` while one runs raises ClassBusy naming
it); a bounded waiting queue (beyond `max_waiting`, EngineBusy says how many wait, and nothing
queued is lost); a seat follows and cancels only its own request (seats are server objects).
One expert cache of `capacity` slots serves the room: an expert loaded for a step serves every
token that chose it, counted once in RoomView.loads; each seat's counts are its own tokens'
chosen experts, judged resident or not as the step began (a snapshot taken between steps,
when nothing else touches the cache). Prefixes: each seat's prompts are salted with its own
key (Engine.submit(salt=)), so no reuse crosses seats and a reused-token count cannot tell a
student what another typed; `shared_prefix=True` shares them. Cache-aware routing is off: it
would make a student's text depend on the others' (the invariance oracle below).

Oracle (tests/core/serve/test_class_engine.py): every seat's text equals HybridLM.generate of
its prompt, whatever the others send and when, because the engine is batch-invariant.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import ParamError
from core.experts import ExpertCache
from core.model.model import HybridLM
from core.model.providers import CacheProvider, open_cache
from core.model.weights import ASSET_DIR
from core.paging.ledger import toy_geometry
from core.serve.engine import Engine, EngineBusy
from core.serve.limits import MAX_DRAFT, MAX_PROMPT_BYTES, MAX_SESSION_NEW
from core.serve.live import PAGE, ExpertCounts, RoomView, RunView, ServeConfig, ServeSnapshot
from core.serve.reports import GenerateReport, PrefillReport, StepReport

__all__ = ["ClassBusy", "ClassEngine", "EngineBusy", "Seat"]

FOLLOW_TIMEOUT_S = 600.0  # a follower gives up on an engine that stopped stepping


class ClassBusy(RuntimeError):
    """The seat already has a request in flight."""


@dataclass(eq=False)
class Seat:
    """One browser session's place in the room (a server object: its key never leaves it)."""

    key: bytes
    rid: int | None = None  # its request in flight
    inbox: queue.Queue = field(default_factory=queue.Queue)  # (events, room) per step
    counts: ExpertCounts | None = None


class ClassEngine:
    def __init__(self, model: HybridLM, *, capacity: int = 32, shared_prefix: bool = False,
                 max_batch: int = 32, max_waiting: int = 64, pool_pages: int | None = None,
                 directory: str | Path = ASSET_DIR) -> None:
        if not isinstance(shared_prefix, bool):
            raise ParamError(f"shared_prefix must be True or False, got {shared_prefix!r}")
        d = model.dims
        one = toy_geometry(d, PAGE).pages(MAX_PROMPT_BYTES + MAX_SESSION_NEW + MAX_DRAFT + 1)
        pages = pool_pages if pool_pages is not None else 2 * max_batch * one
        self.model, self.shared_prefix = model, shared_prefix
        self.cache: ExpertCache = open_cache(directory, d, capacity)
        self.engine = Engine(model, pages, tokens_per_page=PAGE, prefix_cache=True,
                             provider=CacheProvider(self.cache), max_batch=max_batch,
                             max_waiting=max_waiting)
        self._keys = itertools.count(1)
        self._cond = threading.Condition()
        self._seats: dict[int, Seat] = {}  # request id -> its seat
        self._room = self._view(None, 0, 0)
        self._reused = self._prompt_tokens = 0
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="class-engine", daemon=True)
        self._thread.start()

    # ---- seats -----------------------------------------------------------------------------
    def seat(self) -> Seat:
        return Seat(key=f"seat-{next(self._keys)}".encode())

    def serve(self, seat: Seat, cfg: ServeConfig) -> Iterator[ServeSnapshot]:
        """Queue seat's request (bad input, ClassBusy and EngineBusy raise here, before any
        work) and return its snapshots."""
        if not isinstance(seat, Seat):
            raise ParamError(f"seat must be a Seat of this class engine, got {seat!r}")
        if not isinstance(cfg, ServeConfig):
            raise ParamError(f"cfg must be a ServeConfig, got {type(cfg).__name__}")
        cfg.check(self.model)
        with self._cond:
            if self._closed:
                raise EngineBusy("the class engine has stopped")
            if seat.rid is not None:
                raise ClassBusy(f"this page already has request {seat.rid} in flight: wait for "
                                f"it or press Stop")
            salt = None if self.shared_prefix else seat.key
            rid = self.engine.submit(cfg.prompt, cfg.n_new, cfg.draft_len, salt=salt)
            seat.rid, seat.inbox = rid, queue.Queue()
            seat.counts = ExpertCounts(self.model.dims.n_layers, self.model.dims.n_experts)
            self._seats[rid] = seat
            self._cond.notify_all()
        return self._follow(seat, rid, cfg)

    def _follow(self, seat: Seat, rid: int, cfg: ServeConfig) -> Iterator[ServeSnapshot]:
        assert seat.counts is not None
        run = RunView(cfg, seat.counts, None, self.cache)
        done = False
        try:
            while not done:
                events, room = seat.inbox.get(timeout=FOLLOW_TIMEOUT_S)
                due = False
                for ev in events:
                    due |= run.take(ev)
                    done |= isinstance(ev, GenerateReport)
                if due:
                    yield run.snapshot(room)
        finally:
            if not done:
                self.cancel(seat)

    def cancel(self, seat: Seat) -> bool:
        """Retire seat's request at once; False if it has none in flight."""
        with self._cond:
            rid = seat.rid
            if rid is None:
                return False
            seat.rid = None
            self._seats.pop(rid, None)
            if not self.engine.cancel(rid):  # it finished meanwhile: its report is no one's
                self.engine.take(rid)
            return True

    def room(self) -> RoomView:
        with self._cond:
            return self._room

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=30)
        self.cache.close()

    # ---- the step loop ---------------------------------------------------------------------
    def _loop(self) -> None:
        """Step while anything is queued or running. The step runs outside the room's lock
        (the engine's own lock puts a page's submit or Stop between two steps), and the
        thread gives way after each step: a lock a thread holds almost all the time starves
        the others (holding the room's lock through the step, a page's serve() waited until
        the room went idle: 1.5 s behind a 256-byte request, tests/core/serve)."""
        d = self.model.dims
        while True:
            with self._cond:
                while not self._closed and self.engine.idle():
                    self._cond.wait()
                if self._closed:
                    return
                held = [[self.cache.resident(layer, e) is not None for e in range(d.n_experts)]
                        for layer in range(d.n_layers)]  # as the step begins
            rep = self.engine.step()
            with self._cond:
                self._account(rep, held)
            time.sleep(0)  # let a thread woken for one of the locks take it first

    def _account(self, rep: StepReport, held: list[list[bool]]) -> None:
        """Hand each seat its events and its tokens' experts; refresh the room's counts."""
        loads = sum(sum(not held[layer][e] for e in experts)
                    for layer, experts in enumerate(rep.experts))
        handed: list[tuple[Seat, list[object]]] = []
        for rid, seat in list(self._seats.items()):
            events = self.engine.take(rid)
            prefills = [ev for ev in events if isinstance(ev, PrefillReport)]
            for ev in prefills:
                self._reused += ev.reused_tokens
                self._prompt_tokens += ev.prompt_tokens
            if seat.counts is not None:
                for layer, experts in enumerate(rep.experts_of(rid)):
                    seat.counts.add(layer, experts, held[layer])
                    if experts:
                        seat.counts.last[layer] = experts
                seat.counts.counting |= bool(prefills)
            if any(isinstance(ev, GenerateReport) for ev in events):
                seat.rid = None
                del self._seats[rid]
            if events:
                handed.append((seat, events))
        self._room = self._view(rep, loads, len(self._seats))
        for seat, events in handed:
            seat.inbox.put((events, self._room))

    def _view(self, rep: StepReport | None, loads: int, seats: int) -> RoomView:
        if rep is None:
            pool = self.engine.pool
            return RoomView(running=0, phases=(), waiting=0, distinct_experts=(), loads=0,
                            pages_used=pool.num_used, pages_total=pool.n_pages, reused_tokens=0,
                            prompt_tokens=0, shared_prefix=self.shared_prefix, steps=0)
        phases = Counter(w.kind for w in rep.work)
        p = rep.pages
        return RoomView(running=rep.running, phases=tuple(sorted(phases.items())),
                        waiting=rep.waiting, distinct_experts=rep.distinct_experts, loads=loads,
                        pages_used=p.total - p.free, pages_total=p.total,
                        reused_tokens=self._reused, prompt_tokens=self._prompt_tokens,
                        shared_prefix=self.shared_prefix, steps=rep.index)
