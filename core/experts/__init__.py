"""Streaming expert cache over safetensors shards (kimi-k3-in-c v1.0.0 semantics, fixed).

shards   ShardIndex.open(path): own header parsing, validated byte ranges
layout   ExpertLayout / resolve_expert: an expert's tensors and how they reach a slot
fixture  write_fixture(dir, ...): upstream test geometry and multi-layer/shard variants
cache    ExpertCache: slots, LRU + pins + leases, reserve/read/publish batches, exact stats
replay   replay / naive_replay: LRU, LFU, Belady over (layer, expert) traces
synthetic  synthetic_trace: seeded, skewed, persistent routing traces
"""

from __future__ import annotations

from core.experts.accounting import invariant_errors
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
from core.experts.replay import (
    POLICIES,
    ReplayResult,
    compulsory_ceiling,
    hit_rate_curve,
    naive_replay,
    next_use,
    replay,
    trace_keys,
)
from core.experts.shards import ShardIndex, TensorEntry
from core.experts.synthetic import synthetic_trace, zipf_popularity
from core.experts.view import ExpertView

__all__ = [
    "BudgetTooSmall", "CacheSnapshot", "Event", "ExpertCache", "ExpertLayout", "ExpertLoadError",
    "ExpertRef", "ExpertView", "FixtureInfo", "K3_LAYOUT", "K3_TEMPLATE", "MAX_BATCH",
    "NotResident", "POLICIES", "ReplayResult", "ShardFormatError", "ShardIndex", "SlotInfo",
    "SlotsExhausted", "StaleView", "TensorEntry", "compulsory_ceiling", "hit_rate_curve",
    "invariant_errors", "naive_replay", "next_use", "replay", "resolve_expert",
    "synthetic_trace", "tensor_content", "trace_keys", "write_fixture", "zipf_popularity",
]
