"""Fleet budgets and simulation: what the fleet's hit rates are worth on a hybrid model.

The simulator charges a cached block nothing beyond its hit (SimConfig.group_cost = 0). On a
hybrid model a reusable prefix also needs a KDA checkpoint group at its boundary, and at K3
one group weighs as much as k3_group_blocks() blocks of latents: memory the cluster's prefix
cache must find room for. k3_checkpoint_sweep() is the capacity sweep's healthy runs again
(the failover scene's trace recipe, seed SEED, every rate of RATES, no failure) with every
group charged that K3 weight and a checkpoint every CHECKPOINT_BLOCKS blocks, for the routers
in ROUTED: the hit rate, goodput and short P95 the capacity figure should draw beside the free
ones (capacity_sweeps()[0]).

  k3_checkpoint_sweep() -> LoadSweep   computed once (single-flight)
"""

from __future__ import annotations

from dataclasses import replace

from core.dims import k3_group_blocks
from core.experiments.fleet_sim import FAIL_AT, RATES, SEED, fleet_config
from core.experiments.flight import single_flight
from core.fleet.capacity import LoadSweep, load_sweep
from core.fleet.config import DEMO_TRACE

ROUTED = ("cache_aware", "ring")  # the routers that keep a session's cache
CHECKPOINT_BLOCKS = 1


@single_flight(1)
def k3_checkpoint_sweep() -> LoadSweep:
    cfg = replace(fleet_config(ROUTED[0], FAIL_AT).without_failure(),
                  checkpoint_blocks=CHECKPOINT_BLOCKS, group_cost=k3_group_blocks())
    return load_sweep(RATES, replace(DEMO_TRACE, seed=SEED), cfg, routers=ROUTED)
