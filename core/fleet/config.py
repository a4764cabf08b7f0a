"""Simulator configuration and the lab's demo presets (frozen, validated on construction)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from core.errors import ParamError, check_choice, check_float, check_int
from core.fleet.budgets import BudgetConfig
from core.fleet.routers import ROUTERS
from core.fleet.traces import TraceConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class SimConfig:
    """One fleet: size, router, cache and cost model, SLOs, budgets, and an optional failure."""

    clusters: int = 8
    slots: int = 2  # concurrent prefills per cluster
    router: str = "cache_aware"
    vnodes: int = 128
    bound_c: float = 1.25  # bounded_ring capacity factor
    beta: float = 0.5  # cache_aware load weight
    cache_blocks: int = 1024  # prefix cache capacity per cluster, in 512-token blocks
    checkpoint_blocks: int = 1  # KDA checkpoint stride: usable hits round down to it
    group_cost: float = 0.0  # a checkpoint group's memory in blocks (K3: core.dims.k3_group_blocks)
    prefill_tok_s: float = 16_000.0  # per slot, uncached tokens
    hit_cost: float = 0.05  # a reused token costs this fraction of a computed one
    decode_step_s: float = 0.03
    slo_s: tuple[float, float] = (1.0, 4.0)  # TTFT SLO (short, long)
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    fail_cluster: int | None = None
    fail_at: float | None = None
    recover_at: float | None = None
    load_bins: int = 120
    recovery_window_s: float = 5.0

    def __post_init__(self) -> None:
        check_int("clusters", self.clusters, 1, 1024)
        check_int("slots", self.slots, 1, 100_000)
        check_choice("router", self.router, ROUTERS)
        check_int("vnodes", self.vnodes, 1, 4096)
        check_float("bound_c", self.bound_c, 1.0, math.inf)
        check_float("beta", self.beta, 0.0, 1e6)
        check_int("cache_blocks", self.cache_blocks, 0, 1 << 30)
        check_int("checkpoint_blocks", self.checkpoint_blocks, 1, 1 << 20)
        check_float("group_cost", self.group_cost, 0.0, 1e6)
        check_float("prefill_tok_s", self.prefill_tok_s, 1e-3, 1e12)
        check_float("hit_cost", self.hit_cost, 0.0, 1.0)
        check_float("decode_step_s", self.decode_step_s, 0.0, 1e3)
        if len(self.slo_s) != 2:
            raise ParamError(f"slo_s must be a (short, long) pair, got {self.slo_s!r}")
        for k, name in enumerate(("short", "long")):
            check_float(f"slo_s[{name}]", self.slo_s[k], 0.0, math.inf)
        if not isinstance(self.budget, BudgetConfig):
            raise ParamError(f"budget must be a BudgetConfig, got {self.budget!r}")
        check_int("load_bins", self.load_bins, 1, 100_000)
        check_float("recovery_window_s", self.recovery_window_s, 1e-6, 1e9)
        if self.fail_cluster is None:
            if self.fail_at is not None or self.recover_at is not None:
                raise ParamError("fail_at and recover_at need fail_cluster, got fail_cluster=None")
            return
        if self.clusters < 2:
            raise ParamError(f"clusters must be >= 2 to survive a failure, got {self.clusters}")
        check_int("fail_cluster", self.fail_cluster, 0, self.clusters - 1)
        if self.fail_at is None:
            raise ParamError("fail_at must be a time in [0, inf) when fail_cluster is set")
        check_float("fail_at", self.fail_at, 0.0, math.inf)
        if self.recover_at is not None:
            check_float("recover_at", self.recover_at, self.fail_at, math.inf)

    def prefill_s(self, prompt_tokens: np.ndarray | int, hit_tokens: np.ndarray | int
                  ) -> np.ndarray | float:
        """Seconds one slot spends prefilling: computed tokens at prefill_tok_s, reused ones at
        hit_cost of that (the event loop's cost model; works elementwise on arrays)."""
        hit = np.asarray(hit_tokens)
        return (np.asarray(prompt_tokens) - hit) * (1.0 / self.prefill_tok_s) + hit * (
            self.hit_cost / self.prefill_tok_s)

    def without_failure(self) -> SimConfig:
        """The same fleet with no cluster failure."""
        return replace(self, fail_cluster=None, fail_at=None, recover_at=None)


DEMO_TRACE = TraceConfig()
DEMO_SIM = SimConfig(fail_cluster=0, fail_at=25.0, recover_at=50.0)
# For long_burst_trace(): shorts sized by Little's law (40/s x ~5 s), longs capped at 8 in flight.
DEMO_BUDGET = BudgetConfig(mode="reject", budgets=(400, 24), weights=(1, 3), queue_limit=64)
