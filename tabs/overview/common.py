"""The Overview tab's request, served once per parameter set (cached), and the tab that
teaches each stage it passes (titles read from the tabs themselves, never retyped)."""

from __future__ import annotations

import threading
from functools import lru_cache

from core.serve.overview import RequestPath, serve_path
from tabs.engine import TAB as ENGINE
from tabs.engine.common import N_NEW
from tabs.expert_cache import TAB as EXPERT_CACHE
from tabs.fleet_ring import TAB as FLEET_RING
from tabs.kda_replay import TAB as KDA_REPLAY
from tabs.model import TAB as MODEL
from tabs.model.common import model
from tabs.paging import TAB as PAGING
from tabs.prefix import TAB as PREFIX

__all__ = ["N_NEW", "STAGES", "path"]

# (stage, the tabs that teach it), in the order the request meets them.
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Prompt", (MODEL.title,)),
    ("Prefix lookup", (PREFIX.title,)),
    ("Prefill", (PAGING.title,)),
    ("Routing and expert loads", (EXPERT_CACHE.title,)),
    ("Draft, verify, replay", (ENGINE.title, KDA_REPLAY.title)),
    ("Fleet routing", (FLEET_RING.title,)),
)

_LOCK = threading.RLock()  # both figures redraw at once: the second waits for the first's run


def path(draft_len: int, kind: str, capacity: int, warm: bool, clusters: int) -> RequestPath:
    """Read-only: the request served with these knobs (the engine run ignores `clusters`)."""
    with _LOCK:
        run = _served(draft_len, kind, capacity, warm)
    return _routed(run, clusters)


@lru_cache(maxsize=32)
def _served(draft_len: int, kind: str, capacity: int, warm: bool) -> RequestPath:
    return serve_path(model(), kind, draft_len, capacity, warm, clusters=1, n_new=N_NEW)


@lru_cache(maxsize=64)
def _routed(run: RequestPath, clusters: int) -> RequestPath:
    return run.routed(clusters)
