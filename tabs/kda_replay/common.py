"""Adapters from the core cost model to the numbers the KDA replay figures draw.

Every figure of this tab uses core.speculative.cost's one convention: K3's storage dtypes (fp32
state and gate, bf16 k, v, beta and short-conv rows), q not stored, a short conv of K3's width.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from core.dims import K3, KDADims
from core.speculative import LayerBytes, layer_bytes
from core.speculative.oracles import ConvCheck, ReplayCheck, check_conv, check_replay
from tabs.controls import Slider

__all__ = ["CONVENTION", "DRAFTS", "DRAFT_LEN", "K3", "conv_check", "k3_bytes", "k3_label",
           "replay_check", "toy_bytes", "toy_label"]

DRAFT_LEN = Slider(name="draft_len", label="Draft length γ (tokens drafted per verify)", minimum=1,
                   maximum=16, value=4, demo=10,
                   info="The hero: watch bytes grow linearly while the ratio stays put.")
DRAFTS = np.arange(int(DRAFT_LEN.minimum), int(DRAFT_LEN.maximum) + 1)  # every allowed γ
CONVENTION = "fp32 S and g; bf16 k, v, β, conv rows; q not stored"


def toy_bytes(heads: int, dk: int, dv: int) -> LayerBytes:
    """The toy geometry under the tab's convention (K3's dtypes and conv width)."""
    return layer_bytes(KDADims(heads, dk, dv), K3.conv_size)


def k3_bytes(dk: int = K3.kda.dk, dv: int = K3.kda.dv) -> LayerBytes:
    return layer_bytes(KDADims(K3.kda.H, dk, dv), K3.conv_size)


def k3_label() -> str:
    """K3's KDA geometry as the figures print it, e.g. "K3 (H=96, 128×128)"."""
    return f"K3 (H={K3.kda.H}, {K3.kda.dk}×{K3.kda.dv})"


def toy_label(heads: int, dk: int, dv: int) -> str:
    return f"toy (H={heads}, {dk}×{dv})"


# The consistency figure's checks, cached per parameter set (both are pure: seeded inputs, no
# state kept): a slider revisiting a value redraws without re-running the recurrences (issue 14).
@lru_cache(maxsize=16)
def replay_check(draft_len: int, accepted: int, heads: int, dk: int, dv: int, dtype: str
                 ) -> ReplayCheck:
    """Read-only: figures must never mutate the tensors of a cached check."""
    return check_replay(draft_len, accepted, heads, dk, dv, dtype)


@lru_cache(maxsize=64)
def conv_check(draft_len: int, accepted: int) -> ConvCheck:
    return check_conv(draft_len, accepted)
