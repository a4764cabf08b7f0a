"""Once-only engine work, done in the background after the server starts.

A few tabs read a sweep that does not depend on any control and takes seconds on 2 cores (the
Engine tab's 24 speculative requests, the fleet's capacity sweep of 60 simulations, the prefix
cache's checkpoint-spacing sweep). Each is cached and single-flight behind its own lock, so the
first student to open one of those tabs would otherwise wait for it inside the tab's first draw
(each is a core.experiments function cached with @single_flight).
`prerender_lecture` renders, into the render cache every session shares (tabs/render_cache.py),
each tab's figures at its defaults and at each of its presets, in registry order: the path a
lecturer takes through the lab, so a class that follows it is answered from the cache. The
class server (`python app.py --class`) runs it after the sweeps; about one render per figure
and preset, one at a time, so it leaves every other render slot to the room.
`warm_in_background` starts one daemon thread that computes them in tab order a few seconds
after launch, once the first page has been served; a tab opened meanwhile waits on the same
lock for the same result, never a second computation. The sweeps draw nothing; the lecture's
pre-render draws one figure at a time (figures draw under the lab's draw lock), so a student's
redraw waits behind at most one figure's drawing. A figure drawn on the page before
its sweep is ready says so in its heading while it waits (`waiting`: tabs/ui_draw.py), so a
student who opens the tab that early sees why it takes seconds; no slider's redraw ever waits
on a sweep (none depends on a control).
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from core.experiments.scenes import GAMMAS
from core.serve.prompts import KINDS
from tabs.lazy import Lazy

log = logging.getLogger("serving_lab")

START_DELAY_S = 5.0


@dataclass(frozen=True)
class Warmer:
    what: str  # in a student's words: "the ... sweep (what it runs)"
    compute: Callable[[], object]  # cached and single-flight: a second call returns the first's
    ready: Callable[[], bool]  # computed already (a cache lookup, no work)
    figure: str  # the figure that draws it


def _warmer(what: str, name: str, figure: str) -> Warmer:
    sweep = Lazy(name)  # ready: never imported is never computed (asking imports nothing)
    return Warmer(what, sweep, lambda: sweep.module in sys.modules and sweep.resolve().ready(),
                  figure)


@functools.cache  # built once: `waiting` asks on every page draw
def warmers() -> tuple[Warmer, ...]:
    """In registry order; the sweeps are named lazily (tabs/lazy.py), so building the app
    imports none of them (nor torch)."""
    return (_warmer("the checkpoint-spacing sweep (the prefix cache at every spacing)",
                    "core.experiments.prefix_spacing:sweep", "prefix_spacing"),
            _warmer(f"the acceptance sweep ({len(KINDS) * len(GAMMAS)} speculative requests, "
                    "each checked against plain decoding)", "core.experiments.engine:sweep",
                    "engine_acceptance"),
            _warmer("the capacity sweep (fleet simulations at every arrival rate)",
                    "core.experiments.fleet_sim:capacity_sweeps", "fleet_sim_capacity"))


def waiting(figure: str) -> Warmer | None:
    """The warm-up figure `figure` would wait for if drawn now (None: nothing to wait for)."""
    return next((w for w in warmers() if w.figure == figure and not w.ready()), None)


def warm_all() -> dict[str, float]:
    """Compute every warmer now; seconds each (a failure is logged, never raised: the tab's
    own draw then computes it and shows the error in the figure's place)."""
    took: dict[str, float] = {}
    for w in warmers():
        t0 = time.perf_counter()
        try:
            w.compute()
        except Exception:  # noqa: BLE001 - a background warm-up must not kill the server
            log.exception("warm-up of %s failed", w.what)
            continue
        took[w.what] = time.perf_counter() - t0
    return took


def lecture() -> list[tuple[object, object, dict[str, object]]]:
    """(tab, figure, values): every tab's figures at its defaults, then at each preset, in
    registry order (a run tab's figures too: what its page shows before a run)."""
    from tabs.registry import REGISTRY

    out = []
    for tab in REGISTRY:
        for values in (tab.defaults(), *({**tab.defaults(), **p.values} for p in tab.presets)):
            out += [(tab, fig, values) for fig in tab.figures]
    return out


def prerender_lecture() -> tuple[int, float]:
    """Render the lecture's figures (lecture()) into the shared render cache, one at a time;
    (figures rendered or found there, seconds). A figure that fails is logged and skipped: its
    tab draws it, with its error, when asked."""
    from tabs.render_cache import rendered

    t0, done = time.perf_counter(), 0
    for tab, fig, values in lecture():
        try:
            rendered(fig, tab, values)
        except Exception:  # noqa: BLE001 - a background warm-up must not kill the server
            log.exception("pre-rendering %s failed", fig.name)
            continue
        done += 1
    return done, time.perf_counter() - t0


def warm_in_background(delay_s: float = START_DELAY_S, prerender: bool = False
                       ) -> threading.Thread:
    """Also freezes the heap (tabs.figure.freeze_heap) before and after the warm-up: here
    rather than while the app is built, where its full collection cost ~0.16 s of startup.
    prerender: then the lecture's figures too (prerender_lecture)."""
    from tabs.figure import freeze_heap

    def run() -> None:
        time.sleep(delay_s)
        freeze_heap()
        took = warm_all()
        freeze_heap()  # the sweeps just computed live as long as the server
        log.info("warmed: %s", ", ".join(f"{k} {v:.1f} s" for k, v in took.items()))
        if prerender:
            n, seconds = prerender_lecture()
            log.info("pre-rendered the lecture: %d figures in %.1f s", n, seconds)

    t = threading.Thread(target=run, name="serving-lab-warm", daemon=True)
    t.start()
    return t
