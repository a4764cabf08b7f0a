"""The KDA replay tab's hero control and the words its figures print (torch-free). The numbers
they draw: core.experiments.kda_replay, under one convention, CONVENTION."""

from __future__ import annotations

import numpy as np

from core.dims import K3
from tabs.controls import Slider

DRAFT_LEN = Slider(name="draft_len", label="Draft length γ (tokens drafted per verify pass)",
                   minimum=1, maximum=16, value=4, demo=10,
                   info="The hero: watch bytes grow linearly while the ratio stays put.")
DRAFTS = np.arange(int(DRAFT_LEN.minimum), int(DRAFT_LEN.maximum) + 1)  # every allowed γ
CONVENTION = "fp32 S and g; bf16 k, v, β, conv rows; q not stored"


def k3_label() -> str:
    """K3's KDA geometry as the figures print it, e.g. "K3 (H=96, 128×128)"."""
    return f"K3 (H={K3.kda.H}, {K3.kda.dk}×{K3.kda.dv})"


def toy_label(heads: int, dk: int, dv: int) -> str:
    return f"toy (H={heads}, {dk}×{dv})"
