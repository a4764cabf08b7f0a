"""Kimi Delta Attention (KDA): one step and the recurrent reference (the slow, exact twin).

Layout follows flash-linear-attention: q, k, g [B, T, H, K]; v [B, T, H, V]; beta [B, T, H];
state [B, H, K, V]; g is a log-space per-key-channel gate (<= 0). One token, in this order
(fla `naive_recurrent_kda`):

    S <- Diag(exp(g_t)) S                 decay the rows first
    u  = S^T k_t                          predict from the decayed state
    S <- S + k_t (beta_t (v_t - u))^T     delta-rule write
    o_t = S^T (scale q_t)                 read from the updated state

The Model-Viz write-up corrects before decaying and treats g as the decay factor; both are wrong
whenever exp(g) != 1 (tests/core/test_kda.py pins this). `kda_recurrent` is the slow,
obviously-correct twin; `kda_chunked` is the fast path (core/kda/chunked.py).
"""

from __future__ import annotations

import torch

from core.errors import ParamError
from core.kda.validate import check_scale, check_tokens, start_state


def _step(
    q_t: torch.Tensor,
    k_t: torch.Tensor,
    v_t: torch.Tensor,
    g_t: torch.Tensor,
    beta_t: torch.Tensor,
    state: torch.Tensor,
    scale: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    # NOTE: contiguous inputs and reductions via sum(-2) (no BLAS) make the bits depend only on
    # the values, so every caller of this step (recurrent, replay, ring flush) agrees exactly.
    q_t, k_t, v_t, g_t, beta_t, state = (
        x.contiguous() for x in (q_t, k_t, v_t, g_t, beta_t, state)
    )
    decayed = state * g_t.exp().unsqueeze(-1)  # [B, H, K, V]
    u = (decayed * k_t.unsqueeze(-1)).sum(-2)  # [B, H, V]
    delta = beta_t.unsqueeze(-1) * (v_t - u)  # [B, H, V]
    new_state = decayed + k_t.unsqueeze(-1) * delta.unsqueeze(-2)  # [B, H, K, V]
    o_t = (new_state * (scale * q_t).unsqueeze(-1)).sum(-2)  # [B, H, V]
    return o_t, new_state


def kda_step_products(
    q_t: torch.Tensor,
    k_t: torch.Tensor,
    v_t: torch.Tensor,
    g_t: torch.Tensor,
    beta_t: torch.Tensor,
    state: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """kda_step's recurrence as batched products (BLAS), for the FAST kernels: the same
    shapes and result as kda_step (default scale), about half its time for a batch of decode
    tokens, and bits that may differ from it in the last place (the reductions' order is
    BLAS's). Never used where a replay must reproduce a forward's states."""
    B, H, K = q_t.shape
    V = v_t.shape[-1]
    decayed = state * g_t.exp().unsqueeze(-1)  # [B, H, K, V], a new tensor: updated in place
    d3 = decayed.view(B * H, K, V)
    u = torch.bmm(k_t.reshape(B * H, 1, K), d3).view(B, H, V)  # S^T k
    delta = beta_t.unsqueeze(-1) * (v_t - u)  # [B, H, V]
    d3.baddbmm_(k_t.reshape(B * H, K, 1), delta.reshape(B * H, 1, V))  # + k delta^T
    o_t = torch.bmm((q_t * K**-0.5).reshape(B * H, 1, K), d3).view(B, H, V)  # S^T (scale q)
    return o_t, decayed


def kda_step(
    q_t: torch.Tensor,
    k_t: torch.Tensor,
    v_t: torch.Tensor,
    g_t: torch.Tensor,
    beta_t: torch.Tensor,
    state: torch.Tensor,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One token: q_t, k_t, g_t [B, H, K]; v_t [B, H, V]; beta_t [B, H]; state [B, H, K, V].

    Returns (o_t [B, H, V], new_state [B, H, K, V]); the input state is never mutated.
    """
    if state is None:
        raise ParamError("state must be a tensor [B, H, K, V], got None")
    K = check_tokens(q_t, k_t, v_t, g_t, beta_t, state, step=True)[-2]
    return _step(q_t, k_t, v_t, g_t, beta_t, state, check_scale(scale, K))


def kda_recurrent(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The reference: a loop of kda_step over T, in the input dtype (float64 in: ground truth).

    q, k, g [B, T, H, K]; v [B, T, H, V]; beta [B, T, H]; initial_state [B, H, K, V] or None
    (zeros). Returns (o [B, T, H, V], final_state [B, H, K, V]).
    """
    shape = check_tokens(q, k, v, g, beta, initial_state, step=False)
    scale = check_scale(scale, shape[3])
    S = start_state(initial_state, v, shape)
    outputs = []
    for t in range(shape[1]):
        o_t, S = _step(q[:, t], k[:, t], v[:, t], g[:, t], beta[:, t], S, scale)
        outputs.append(o_t)
    if not outputs:
        return v.new_zeros(shape[0], 0, shape[2], shape[4]), S
    return torch.stack(outputs, dim=1), S  # [B, T, H, V]
