"""Adapters from the core cost model to the numbers the KDA replay figures draw."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.dims import K3
from core.spec import rollback_bytes
from tabs.controls import Slider

__all__ = ["DRAFTS", "DRAFT_LEN", "K3", "StepCost", "k3_cost", "k3_label", "one_dtype_ratio",
           "toy_cost"]

DRAFT_LEN = Slider(
    "draft_len",
    "Draft length γ (tokens drafted per verify)",
    1,
    16,
    4,
    demo=10,
    info="The hero: watch bytes grow linearly while the ratio stays put.",
)
DRAFTS = np.arange(int(DRAFT_LEN.minimum), int(DRAFT_LEN.maximum) + 1)  # every allowed γ


@dataclass(frozen=True, slots=True)
class StepCost:
    snapshot_per_step: int
    raw_per_step: int

    @property
    def ratio(self) -> float:
        return self.snapshot_per_step / self.raw_per_step


def _cost(heads: int, dk: int, dv: int, draft_len: int, **dtypes: int) -> StepCost:
    c = rollback_bytes(heads, dk, dv, draft_len, **dtypes)
    return StepCost(c.snapshot_bytes_per_step, c.raw_bytes_per_step)


def toy_cost(heads: int, dk: int, dv: int, draft_len: int) -> StepCost:
    """The lab's toy run: K3's dtype mix (fp32 state, bf16 k v beta, fp32 g) at small dims."""
    return _cost(heads, dk, dv, draft_len)


def k3_cost(draft_len: int, dk: int = K3.kda.dk, dv: int = K3.kda.dv) -> StepCost:
    return _cost(K3.kda.H, dk, dv, draft_len)


def k3_label() -> str:
    """K3's KDA geometry as the figures print it, e.g. "K3 (H=96, 128×128)"."""
    return f"K3 (H={K3.kda.H}, {K3.kda.dk}×{K3.kda.dv})"


def one_dtype_ratio(d: int) -> float:
    """d_k = d_v = d, one dtype everywhere, q kept: d^2 / (3d + d + 1) (the seed's formula)."""
    c = rollback_bytes(
        1,
        d,
        d,
        1,
        state_bytes=1,
        k_bytes=1,
        v_bytes=1,
        g_bytes=1,
        beta_bytes=1,
        include_q=True,
        q_bytes=1,
    )
    return c.ratio
