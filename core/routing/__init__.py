"""core.routing: cache-aware MoE routing, its meters, next-layer prefetch, and the closed loop.

What it is: the engine behind the Cache-aware routing tab. The two levers of disk-streamed
MoE: routing (choose a resident expert instead of a cold one; changes the model's output) and
prefetch (load the next layer's experts ahead of time; changes only placement). It measures
quality where it matters, at the output, beside the meters that only restate the swap rate.

Modules, bottom up:
  config      RouteConfig (method, k, J, M, P, alpha, lam), validated, never clamped; KINDS
  ranking     the true ranking (ties to the lower id) by one SIMD sort of (score, id) keys:
              top_ranks, rank_order; input checks
  select      select_experts (vectorised) and naive_select_experts (a per-row loop twin),
              prior_lift (cache_prior's ranking terms):
              topk, max_rank (colibri CACHE_ROUTE), cum_prob, cache_prior (arXiv:2412.00099)
  meters      per-row and per-layer swap, agree (= 1 - swap), dropped mass, L1 shift, KL
  policy      RoutePolicy: select_experts as the MoE's selection policy, meters per phase
  prefetch    Prefetcher: previous-token, PILOT and oracle predictors of layer L+1's experts
  provider    RoutedProvider: CacheProvider + policy + prefetcher + prefill/decode windows
  quality     teacher-forced NLL and argmax step by step; delta NLL, greedy agreement
  disk        disk presets (HDD, SATA SSD, NVMe, RAM) and modelled read time
  warm_state  the warm cache state every arm starts from: capture, restore, warm_up
  arms        compare_arms: stock / routing / prefetch / both through core.serve's Engine
  arm_report  Pass (what one pass measured) -> ArmReport: hit split, bytes, waste, swaps,
              quality, modelled tokens/s
  ceiling     LRU and Belady replay from a warm cache, per layer call (the frontier's ceiling)
  record      run_pass: one teacher-forced pass recorded per (step, layer): PassRecord
  speed       modelled tokens/s of a PassRecord from a compute time and a disk preset
  batch_aware batch-aware routing (Lynx): each row's max-rank fill prefers the experts the
              rows before it in the same step chose, so a step loads fewer experts (off by
              default; outside the engine's batch-invariance oracle)
The tab's grid and precomputed sweep: core.experiments.routing_grid, routing_sweep. config and
disk import without torch (the exports below load on first use).

Exports: RouteConfig, METHODS, KINDS, Selection, select_experts, naive_select_experts,
top_ranks, RowMeters, LayerMeters, route_meters, RoutePolicy, Prefetcher, PrefetchMeters,
PREDICTORS, RoutedProvider, teacher_forced, heldout_text, Disk, DISKS, ARMS, ArmReport,
compare_arms, BatchAwarePolicy, select_batch_aware.

Oracles (tests/core/routing, tests/core/model/test_routing_*.py): hand-worked selection
tables (each case worked in a comment); select_experts equals naive_select_experts on
hypothesis-drawn scores and residency; nothing resident and everything resident reduce to
top-k; agree == 1 - swap exactly and the overlap counted independently equals k - swaps; the
model with stock selection is bit-identical to the pre-routing MoE; prefetch leaves the
output bit-identical; every arm is reproducible from its seed; LRU replay from the warm state
equals the live cache's hits (the shipped sweep: tests/core/experiments).
"""

import importlib

# PEP 562: the exports load on first use, so a torch-free leaf (config, disk) imports without
# torch. Each name -> the module that defines it.
_EXPORTS = {
    "ArmReport": "arm_report",
    "BatchAwarePolicy": "batch_aware", "select_batch_aware": "batch_aware",
    "ARMS": "arms", "compare_arms": "arms",
    "KINDS": "config", "METHODS": "config", "RouteConfig": "config",
    "DISKS": "disk", "Disk": "disk",
    "LayerMeters": "meters", "RowMeters": "meters", "route_meters": "meters",
    "RoutePolicy": "policy",
    "PREDICTORS": "prefetch", "Prefetcher": "prefetch", "PrefetchMeters": "prefetch",
    "RoutedProvider": "provider",
    "heldout_text": "quality", "teacher_forced": "quality",
    "top_ranks": "ranking",
    "Selection": "select", "naive_select_experts": "select", "select_experts": "select",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
