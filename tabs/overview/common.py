"""The tab that teaches each stage of the Overview's request (titles read from the tabs
themselves, never retyped). The request itself: core.experiments.overview."""

from __future__ import annotations

from tabs.engine import TAB as ENGINE
from tabs.expert_cache import TAB as EXPERT_CACHE
from tabs.fleet_ring import TAB as FLEET_RING
from tabs.kda_replay import TAB as KDA_REPLAY
from tabs.model import TAB as MODEL
from tabs.paging import TAB as PAGING
from tabs.prefix import TAB as PREFIX

# (stage, the tabs that teach it), in the order the request meets them.
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Prompt", (MODEL.title,)),
    ("Prefix lookup", (PREFIX.title,)),
    ("Prefill", (PAGING.title,)),
    ("Routing and expert loads", (EXPERT_CACHE.title,)),
    ("Draft, verify, replay", (ENGINE.title, KDA_REPLAY.title)),
    ("Fleet routing", (FLEET_RING.title,)),
)
