"""The five scenario presets: scripts of calls on a Recorder (see the package docstring)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from core.experts.scenarios.geometry import CHUNK_REQUESTS, CUT_EXPERT, N_EXPERTS
from core.experts.scenarios.recorder import Recorder

Route = tuple[tuple[int, ...], ...]  # the scheduled tokens' top-k, router order


def _prefetch_then_consume(rec: Recorder, route: Route, k: int, slots: int) -> None:
    probe = tuple(range(k))
    rec.prefetch("probe", probe)  # cold: requests 0, prefetch_reads k
    rec.consume("probe", probe)  # hits k, aggregate 0: every hit was a prefetch
    rec.consume("probe", probe)  # hits 2k, aggregate k
    rec.reset()
    rec.consume("probe", probe)  # the resident k: hits k, no prefetch, no bytes
    for t, ids in enumerate(route, 1):
        rec.token(f"t{t}", ids, ids)


def _consume_one_only(rec: Recorder, route: Route, k: int, slots: int) -> None:
    rec.prefetch("probe", tuple(range(k)))
    rec.consume("probe", (0,) * k)  # 1 prefetched + (k - 1) resident; aggregate says 0
    for t, ids in enumerate(route, 1):
        rec.token(f"t{t}", ids, (ids[0],) * k)


def _reset_window(rec: Recorder, route: Route, k: int, slots: int) -> None:
    rec.prefetch("probe", tuple(range(k)))
    rec.reset()
    rec.consume("probe", tuple(range(k)))  # consumed in the next window: aggregate says resident
    for t, ids in enumerate(route, 1):
        rec.prefetch(f"t{t}", ids)  # issued at the end of the previous step
        rec.reset()
        rec.c.begin_layer()
        rec.consume(f"t{t}", ids)


def _truncated_shard(rec: Recorder, route: Route, k: int, slots: int) -> None:
    rec.consume("probe", (0,))
    rec.truncate()
    rec.prefetch("probe", tuple(range(CUT_EXPERT, N_EXPERTS)))  # publishes 0
    rec.consume("probe", (N_EXPERTS - 1,))  # a miss that fails; expert 0 survives
    for t, ids in enumerate(route, 1):
        rec.token(f"t{t}", ids, ids)


def chunk_tokens(slots: int, k: int) -> int:
    """Tokens per prefill chunk of the pressure scenario: CHUNK_REQUESTS x slots experts asked."""
    return math.ceil(CHUNK_REQUESTS * slots / k)


def _pressure(rec: Recorder, route: Route, k: int, slots: int) -> None:
    if slots - k - 1 >= 1:  # fixed mode keeps topk + 1 slots unpinned
        counts = np.bincount(np.asarray(route).ravel(), minlength=N_EXPERTS)
        rec.warm_pin("setup", int(np.argmax(counts)))
    chunk = chunk_tokens(slots, k)
    for c, start in enumerate(range(0, len(route), chunk), 1):
        ids = list(dict.fromkeys(e for tok in route[start:start + chunk] for e in tok))
        rec.reset()
        rec.c.begin_layer()
        rec.prefetch(f"c{c}", sorted(ids))  # as a bitmap yields them; the tail finds no slot
        for j in range(0, len(ids), k):  # one get each, in router order, k at a time
            if j:
                rec.c.begin_layer()  # the previous k were consumed: release their leases
            rec.consume(f"c{c}", ids[j:j + k])


SCRIPTS: dict[str, Callable[[Recorder, Route, int, int], None]] = {
    "prefetch then consume": _prefetch_then_consume,
    "consume one only": _consume_one_only,
    "reset window": _reset_window,
    "truncated shard": _truncated_shard,
    "pressure": _pressure,
}
SCENARIOS = tuple(SCRIPTS)
