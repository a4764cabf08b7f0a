"""Named tolerances: one definition for the tests and for figures that print pass / fail."""

from __future__ import annotations

from types import MappingProxyType

import torch

FP64_CHUNKED_MAX_ABS = 1e-10  # chunked (WY) form vs the float64 recurrence
FP32_ORACLE_MAX_REL = 1e-4  # float32 vs fla's naive reference, relative to max |ref|
FP32_DECODE_MAX_ABS = 1e-4  # float32 prefill vs token-by-token decode logits

# max |Δ| of the chunked form vs the step recurrence, per compute dtype (values are O(1))
CHUNKED_MAX_ABS = MappingProxyType({"float64": FP64_CHUNKED_MAX_ABS, "float32": 1e-4})


def max_abs(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a - b| computed in float64; 0.0 for empty tensors (nothing to disagree on)."""
    if a.shape != b.shape:
        raise ValueError(f"max_abs: shapes differ, {tuple(a.shape)} vs {tuple(b.shape)}")
    return float((a.double() - b.double()).abs().max()) if a.numel() else 0.0
