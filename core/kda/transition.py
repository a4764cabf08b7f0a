"""A segment's transition: what a run of KDA tokens does to ANY incoming state.

The recurrence is affine in the state, S_T = M S_0 + S_ext, so a long prompt can be cut into
segments that run in parallel from zeros and be merged exactly afterwards (context
parallelism). `segment_transition` computes M with the same per-token order as kda_step.
"""

from __future__ import annotations

import torch

from core.kda.validate import expect_shape, float_tensor, same_dtype


def segment_transition(k: torch.Tensor, g: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """M = A_T ... A_1 with A_t = (I - beta_t k_t k_t^T) Diag(exp(g_t)), per head.

    k, g [B, T, H, K]; beta [B, T, H]. Returns M [B, H, K, K]: a segment maps any start state
    S0 [B, H, K, V] to M @ S0 + S_ext, where S_ext is the segment's state from zeros
    (the basis of context parallelism).
    """
    k = float_tensor("k", k, 4, "[B, T, H, K]")
    g = float_tensor("g", g, 4, "[B, T, H, K]")
    beta = float_tensor("beta", beta, 3, "[B, T, H]")
    expect_shape("g", g, tuple(k.shape), "[B, T, H, K]")
    expect_shape("beta", beta, tuple(k.shape[:3]), "[B, T, H]")
    same_dtype(k, g=g, beta=beta)
    B, T, H, K = k.shape
    M = torch.eye(K, dtype=k.dtype).expand(B, H, K, K).clone()  # [B, H, K, K]
    for t in range(T):
        M = M * g[:, t].exp().unsqueeze(-1)  # [B, H, K, K]
        kM = (M * k[:, t].unsqueeze(-1)).sum(-2)  # [B, H, K]
        M = M - (beta[:, t, :, None] * k[:, t]).unsqueeze(-1) * kM.unsqueeze(-2)
    return M
