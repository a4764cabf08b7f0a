"""core.experts: a streaming expert cache over safetensors shards, and the policy replay that
bounds it.

What it is: the engine behind the Expert cache and Cache policies tabs. An ExpertCache keeps a
fixed arena of page-aligned expert slots and serves an MoE layer's experts as zero-copy views,
loading misses one at a time and batches in parallel (reserve, read, publish). Its fixed mode
(the default) corrects kimi-k3-in-c v1.0.0's quirks: batch members are protected, warm() is
not a request, a read the shard cannot satisfy evicts nobody, views are leased until
begin_layer(), and every hit and eviction is classified when it happens. `compat="k3-v1"`
reproduces v1.0.0's counters, quirks included. Policy replay (LRU, LFU, Belady) runs a
recorded (layer, expert) trace through a cache of any capacity, offline.

Modules, bottom up:
  shards      ShardIndex.open(path): own safetensors header parsing, validated byte ranges
  layout      ExpertLayout, resolve_expert: which tensors make an expert and where they lie
  reader      slot_stride (the one slot-size rule), aligned read plans, per-piece checks
  slots       SlotTable: per-slot state, LRU victim choice, leases
  slot_view   ExpertView: zero-copy, read-only tensors of one slot, checked by generation
  accounting  the counters of a stats window, classified per event
  stats       CacheStats (what stats() returns, typed) and invariant_errors
  events      the bounded event log, the request trace, CacheSnapshot for figures
  loader      SlotLoader: serial admit and batch reserve/read/publish into the arena
  cache       ExpertCache: the public cache
  policies    replay / naive_replay: LRU, LFU, Belady over a trace; hit_rate_curve
  working_set the per-token working-set law (lru_cliff), LRU stack distances and lru_curve
  synthetic   synthetic_trace: seeded, skewed, persistent routing traces; repeats_previous
  fixture     write_fixture: upstream's test geometry, plus multi-layer/shard variants
  scenarios/  scripted, recorded runs of the cache for the figures (imported on its own)

Exports: ExpertCache and MAX_BATCH; ShardIndex, TensorEntry; ExpertLayout, ExpertRef,
K3_LAYOUT, K3_TEMPLATE, resolve_expert; ExpertView; CacheStats, invariant_errors;
CacheSnapshot, SlotInfo, Event; slot_stride; replay, naive_replay, ReplayResult, POLICIES,
hit_rate_curve, compulsory_ceiling, next_use, trace_keys; token_working_set, lru_cliff,
stack_distances, lru_curve; synthetic_trace, zipf_popularity, repeats_previous;
write_fixture, tensor_content, FixtureInfo; the errors (BudgetTooSmall, ExpertLoadError,
NotResident, ShardFormatError, SlotsExhausted, StaleView).

Oracles (tests/core/experts): every byte a view hands out equals `safetensors.safe_open`'s;
compat-mode counters equal kimi-k3-in-c v1.0.0's parity battery and probes (reference/
expert-cache.md sections 10 and 12); LRU replay equals the live cache counter for counter;
each fast replay policy equals its naive twin; LRU from stack distances equals LRU replay at
every capacity; the window invariants hold after every operation of random sequences.
"""

from __future__ import annotations

from core.experts.cache import MAX_BATCH, ExpertCache
from core.experts.errors import (
    BudgetTooSmall,
    ExpertLoadError,
    NotResident,
    ShardFormatError,
    SlotsExhausted,
    StaleView,
)
from core.experts.events import CacheSnapshot, Event, SlotInfo
from core.experts.fixture import FixtureInfo, tensor_content, write_fixture
from core.experts.layout import K3_LAYOUT, K3_TEMPLATE, ExpertLayout, ExpertRef, resolve_expert
from core.experts.policies import (
    POLICIES,
    ReplayResult,
    compulsory_ceiling,
    hit_rate_curve,
    naive_replay,
    next_use,
    replay,
    trace_keys,
)
from core.experts.reader import slot_stride
from core.experts.shards import ShardIndex, TensorEntry
from core.experts.slot_view import ExpertView
from core.experts.stats import CacheStats, invariant_errors
from core.experts.synthetic import repeats_previous, synthetic_trace, zipf_popularity
from core.experts.working_set import lru_cliff, lru_curve, stack_distances, token_working_set

__all__ = [
    "BudgetTooSmall", "CacheSnapshot", "CacheStats", "Event", "ExpertCache", "ExpertLayout",
    "ExpertLoadError", "ExpertRef", "ExpertView", "FixtureInfo", "K3_LAYOUT", "K3_TEMPLATE",
    "MAX_BATCH", "NotResident", "POLICIES", "ReplayResult", "ShardFormatError", "ShardIndex",
    "SlotInfo", "SlotsExhausted", "StaleView", "TensorEntry", "compulsory_ceiling",
    "hit_rate_curve", "invariant_errors", "lru_cliff", "lru_curve", "naive_replay", "next_use",
    "repeats_previous", "replay", "resolve_expert", "slot_stride", "stack_distances",
    "synthetic_trace", "tensor_content", "token_working_set", "trace_keys", "write_fixture",
    "zipf_popularity",
]
