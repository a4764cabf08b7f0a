"""REGISTRY: the one ordered list of tabs that the app, the export CLI and the tests iterate."""

from __future__ import annotations

from tabs.batching import TAB as BATCHING
from tabs.cache_policies import TAB as CACHE_POLICIES
from tabs.engine import TAB as ENGINE
from tabs.expert_cache import TAB as EXPERT_CACHE
from tabs.fleet_ring import TAB as FLEET_RING
from tabs.fleet_sim import TAB as FLEET_SIM
from tabs.kda_replay import TAB as KDA_REPLAY
from tabs.model import TAB as MODEL
from tabs.overview import TAB as OVERVIEW
from tabs.paging import TAB as PAGING
from tabs.prefix import TAB as PREFIX
from tabs.replay_ring import TAB as REPLAY_RING
from tabs.routing import TAB as ROUTING
from tabs.serve import TAB as SERVE
from tabs.spec import FigureSpec, TabSpec

# The order follows one request: what it is (Overview, Model), its path through the engine
# (prefix lookup, pages, expert loads and the policies and routing behind them, speculative
# decoding and its rollback, the whole engine live), then many requests: one engine's batch,
# then the fleet that chose its cluster.
REGISTRY: tuple[TabSpec, ...] = (
    OVERVIEW,
    MODEL,
    PREFIX,
    PAGING,
    EXPERT_CACHE,
    CACHE_POLICIES,
    ROUTING,
    ENGINE,
    KDA_REPLAY,
    REPLAY_RING,
    SERVE,
    BATCHING,
    FLEET_RING,
    FLEET_SIM,
)


def all_figures() -> list[tuple[TabSpec, FigureSpec]]:
    return [(tab, fig) for tab in REGISTRY for fig in tab.figures]


def find_figure(name: str) -> tuple[TabSpec, FigureSpec]:
    for tab, fig in all_figures():
        if fig.name == name:
            return tab, fig
    raise KeyError(f"no figure named {name!r}")
