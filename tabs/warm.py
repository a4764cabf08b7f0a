"""Once-only engine work, done in the background after the server starts.

A few tabs read a sweep that does not depend on any control and takes seconds on 2 cores (the
Engine tab's 24 speculative requests, the fleet's capacity sweep of 60 simulations, the prefix
cache's checkpoint-spacing sweep). Each is cached and single-flight behind its own lock, so the
first student to open one of those tabs would otherwise wait for it inside the tab's first draw.
`warm_in_background` starts one daemon thread that computes them in tab order a few seconds
after launch, once the first page has been served; a tab opened meanwhile waits on the same
lock for the same result, never a second computation. Nothing here draws a figure (figures
draw under the lab's draw lock and would hold up redraws).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger("serving_lab")

START_DELAY_S = 5.0


def warmers() -> tuple[tuple[str, Callable[[], object]], ...]:
    """(what, compute) in registry order; imported late so building the app stays cheap."""
    from tabs.engine.common import sweep as engine_sweep
    from tabs.fleet_sim.capacity import sweeps as capacity_sweeps
    from tabs.prefix.common import sweep as spacing_sweep

    return (("prefix cache: checkpoint-spacing sweep", spacing_sweep),
            ("engine: acceptance sweep over draft lengths", engine_sweep),
            ("fleet: capacity sweep", capacity_sweeps))


def warm_all() -> dict[str, float]:
    """Compute every warmer now; seconds each (a failure is logged, never raised: the tab's
    own draw then computes it and shows the error in the figure's place)."""
    took: dict[str, float] = {}
    for what, compute in warmers():
        t0 = time.perf_counter()
        try:
            compute()
        except Exception:  # noqa: BLE001 - a background warm-up must not kill the server
            log.exception("warm-up of %s failed", what)
            continue
        took[what] = time.perf_counter() - t0
    return took


def warm_in_background(delay_s: float = START_DELAY_S) -> threading.Thread:
    """Also freezes the heap (tabs.figure.freeze_heap) before and after the warm-up: here
    rather than while the app is built, where its full collection cost ~0.16 s of startup."""
    from tabs.figure import freeze_heap

    def run() -> None:
        time.sleep(delay_s)
        freeze_heap()
        took = warm_all()
        freeze_heap()  # the sweeps just computed live as long as the server
        log.info("warmed: %s", ", ".join(f"{k} {v:.1f} s" for k, v in took.items()))

    t = threading.Thread(target=run, name="serving-lab-warm", daemon=True)
    t.start()
    return t
