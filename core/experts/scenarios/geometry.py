"""What every scenario runs on: the upstream test geometry, the knob ranges, the routing.

One layer of 24 experts of 1,632 B (kimi-k3-in-c's cache fixture) in a 12,288-B stride, so a
slot count is a budget of slots x STRIDE. The scheduled tokens' routing is a seeded synthetic
trace, skewed and persistent.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.errors import ParamError, check_int
from core.experts.fixture import expert_bytes
from core.experts.fixture_store import shared_fixture
from core.experts.reader import slot_stride
from core.experts.synthetic import synthetic_trace

N_EXPERTS = 24
GEOMETRY = {"n_layers": 1, "n_experts": N_EXPERTS, "rows": 8, "packed_cols": 64}
EXPERT_BYTES = expert_bytes(GEOMETRY["rows"], GEOMETRY["packed_cols"])  # 1,632
STRIDE = slot_stride(EXPERT_BYTES)  # 12,288
MAX_TOPK = 8
MAX_SLOTS = N_EXPERTS
MAX_SCHEDULE = 64
SKEW, PERSISTENCE = 1.0, 0.5  # routing of the scheduled tokens (synthetic_trace)
CHUNK_REQUESTS = 3  # a prefill chunk asks for CHUNK_REQUESTS x slots experts (with repeats)
CUT_EXPERT = 20  # the truncated copy ends at this expert's offset: 20..23 cannot be read


def fixture_dir() -> Path:
    """The shared fixture of this geometry (core.experts.fixture_store)."""
    return shared_fixture(json.dumps(GEOMETRY, sort_keys=True))


def check_slots(slots: object, topk: int, hi: int = MAX_SLOTS) -> int:
    """slots as an int in [topk + 1, hi], else a ParamError naming slots, topk and the range."""
    v = check_int("slots", slots, 1, hi)
    if v < topk + 1:
        raise ParamError(
            f"slots must be in [topk + 1, {hi}] = [{topk + 1}, {hi}] for topk = {topk}, got "
            f"slots = {v}: with fewer than topk + 1 slots one token could evict an expert it "
            f"is still using"
        )
    return v


def routing(schedule: int, topk: int, seed: int) -> tuple[tuple[int, ...], ...]:
    """The scheduled tokens' experts (one layer of 24, skew 1, persistence 0.5), router order."""
    tr = synthetic_trace(schedule, 1, N_EXPERTS, topk, SKEW, PERSISTENCE, seed)
    return tuple(tuple(int(e) for e in row) for row in tr[:, 1].reshape(schedule, topk))
