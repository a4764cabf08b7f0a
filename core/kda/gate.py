"""The KDA gate: a log-space decay per key channel, g <= 0, from the gate pre-activation."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from core.errors import check_choice, check_float
from core.kda.validate import expect_shape, float_tensor

GATE_FORMS = ("softplus", "lowerbound")


def kda_gate(
    z: torch.Tensor,
    A_log: torch.Tensor,
    dt_bias: torch.Tensor | None,
    form: str = "softplus",
    lower_bound: float = -5.0,
    sigmoid: Callable[[torch.Tensor], torch.Tensor] = torch.sigmoid,
) -> torch.Tensor:
    """Log-space gate g [B, T, H, K] from the gate pre-activation z [B, T, H, K].

    A_log [H]; dt_bias [H*K] (None: zero). form "softplus": g = -exp(A_log[h]) softplus(z + dt);
    form "lowerbound" (K3): g = lower_bound * sigmoid(exp(A_log[h]) (z + dt)), so g in
    (lower_bound, 0) and the per-step decay exp(g) stays above exp(lower_bound). `sigmoid` is
    the one the model's kernels use (core.model.kernels: the batch-invariant one by default).
    """
    check_choice("form", form, GATE_FORMS)
    lb = check_float("lower_bound", lower_bound, -88.0, 0.0)
    z = float_tensor("z", z, 4, "[B, T, H, K]")
    H, K = z.shape[-2:]
    A_log = float_tensor("A_log", A_log, 1, "[H]")
    expect_shape("A_log", A_log, (H,), "[H]")
    if dt_bias is not None:
        dt_bias = float_tensor("dt_bias", dt_bias, 1, "[H*K]")
        expect_shape("dt_bias", dt_bias, (H * K,), "[H*K]")
        z = z + dt_bias.view(H, K)  # [B, T, H, K]
    a = A_log.exp()[:, None]  # [H, 1]
    if form == "softplus":
        return -a * F.softplus(z)  # [B, T, H, K]
    return lb * sigmoid(a * z)  # [B, T, H, K]
