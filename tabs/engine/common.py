"""The Engine tab's engine runs, cached per parameter set (a redraw after the first is a lookup),
and the look shared by its figures."""

from __future__ import annotations

import threading
from functools import lru_cache

from core.serve.engine import MAX_DRAFT
from core.serve.prompts import KINDS
from core.serve.spec_sweep import GAMMAS, SpecRun, SpecSweep, plain_text, spec_run
from tabs.model.common import model

__all__ = ["GAMMAS", "KINDS", "KIND_STYLE", "MAX_DRAFT", "N_NEW", "plain", "run", "sweep",
           "sweep_ready"]

N_NEW = 32  # bytes generated per request: the sweep of every (kind, gamma) stays a few seconds
KIND_STYLE = {  # colour, marker: one per prompt kind, on every figure of the tab
    "code": ("#0072B2", "o"),
    "records": ("#E69F00", "s"),
    "prose": ("#CC79A7", "^"),
}
assert set(KIND_STYLE) == set(KINDS)

# NOTE: the tab's figures redraw at once after a control moves; one lock makes the second wait
# for the first's engine run instead of repeating it on the other core.
_LOCK = threading.RLock()


def run(kind: str, gamma: int) -> SpecRun:
    """Read-only: one speculative request of `kind` at draft length gamma."""
    with _LOCK:
        return _run(kind, gamma)


@lru_cache(maxsize=len(KINDS) * len(GAMMAS))
def _run(kind: str, gamma: int) -> SpecRun:
    return spec_run(model(), kind, gamma, N_NEW)


def plain(kind: str) -> bytes:
    with _LOCK:
        return _plain(kind)


@lru_cache(maxsize=len(KINDS))
def _plain(kind: str) -> bytes:
    return plain_text(model(), kind, N_NEW)


def sweep() -> SpecSweep:
    """Every kind at every gamma, each run checked against plain greedy decoding."""
    with _LOCK:
        return _sweep()


def sweep_ready() -> bool:
    return _sweep.cache_info().currsize > 0


@lru_cache(maxsize=1)
def _sweep() -> SpecSweep:
    return SpecSweep.of((run(k, g) for k in KINDS for g in GAMMAS),
                        {k: plain(k) for k in KINDS})
