"""Kimi Delta Attention (KDA): gate, one step, the recurrent reference and the chunked form.

Layout follows flash-linear-attention: q, k, g [B, T, H, K]; v [B, T, H, V]; beta [B, T, H];
state [B, H, K, V]; g is a log-space per-key-channel gate (<= 0). One token, in this order
(fla `naive_recurrent_kda`):

    S <- Diag(exp(g_t)) S                 decay the rows first
    u  = S^T k_t                          predict from the decayed state
    S <- S + k_t (beta_t (v_t - u))^T     delta-rule write
    o_t = S^T (scale q_t)                 read from the updated state

The Model-Viz write-up corrects before decaying and treats g as the decay factor; both are wrong
whenever exp(g) != 1 (tests/core/test_kda.py pins this). `kda_recurrent` is the slow,
obviously-correct twin; `kda_chunked` is the fast path (core/kda_chunked.py).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from core.errors import ParamError, check_choice, check_float, check_int
from core.kda_chunked import chunked_scan

GATE_FORMS = ("softplus", "lowerbound")


def _check_float_tensor(name: str, x: object, rank: int, layout: str) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise ParamError(f"{name} must be a floating-point tensor {layout}, got {type(x).__name__}")
    if x.dim() != rank:
        raise ParamError(f"{name} must be {rank}-D {layout}, got shape {tuple(x.shape)}")
    return x


def _check_shape(name: str, x: torch.Tensor, shape: tuple[int, ...], layout: str) -> None:
    if tuple(x.shape) != shape:
        raise ParamError(f"{name} must have shape {layout} = {shape}, got {tuple(x.shape)}")


def _check_dtype(ref: torch.Tensor, **tensors: torch.Tensor) -> None:
    for name, x in tensors.items():
        if x.dtype != ref.dtype:
            raise ParamError(f"{name} must have dtype {ref.dtype} like q, got {x.dtype}")


def _check_scale(scale: float | None, K: int) -> float:
    if scale is None:
        return K**-0.5
    return check_float("scale", scale, 0.0, math.inf)


def check_tokens(
    q: object, k: object, v: object, g: object, beta: object, state: object, *, step: bool
) -> tuple[int, ...]:
    """Validate one token (step=True: no T axis) or a sequence; return (B, [T,] H, K, V).

    Shapes: q, k, g [B, T, H, K]; v [B, T, H, V]; beta [B, T, H]; state [B, H, K, V] or None.
    """
    t = "" if step else "T, "
    q = _check_float_tensor("q", q, 3 if step else 4, f"[B, {t}H, K]")
    lead = tuple(q.shape[:-1])
    K = q.shape[-1]
    k = _check_float_tensor("k", k, q.dim(), f"[B, {t}H, K]")
    g = _check_float_tensor("g", g, q.dim(), f"[B, {t}H, K]")
    v = _check_float_tensor("v", v, q.dim(), f"[B, {t}H, V]")
    beta = _check_float_tensor("beta", beta, q.dim() - 1, f"[B, {t}H]")
    _check_shape("k", k, tuple(q.shape), f"[B, {t}H, K]")
    _check_shape("g", g, tuple(q.shape), f"[B, {t}H, K]")
    _check_shape("v", v, (*lead, v.shape[-1]), f"[B, {t}H, V]")
    _check_shape("beta", beta, lead, f"[B, {t}H]")
    _check_dtype(q, k=k, v=v, g=g, beta=beta)
    V = v.shape[-1]
    if K < 1 or V < 1:
        raise ParamError(f"K and V (the last axes of q and v) must be >= 1, got K={K}, V={V}")
    if state is not None:
        state = _check_float_tensor("state", state, 4, "[B, H, K, V]")
        _check_shape("state", state, (lead[0], lead[-1], K, V), "[B, H, K, V]")
        _check_dtype(q, state=state)
    return (*lead, K, V)


def kda_gate(
    z: torch.Tensor,
    A_log: torch.Tensor,
    dt_bias: torch.Tensor | None,
    form: str = "softplus",
    lower_bound: float = -5.0,
) -> torch.Tensor:
    """Log-space gate g [B, T, H, K] from the gate pre-activation z [B, T, H, K].

    A_log [H]; dt_bias [H*K] (None: zero). form "softplus": g = -exp(A_log[h]) softplus(z + dt);
    form "lowerbound" (K3): g = lower_bound * sigmoid(exp(A_log[h]) (z + dt)), so g in
    (lower_bound, 0) and the per-step decay exp(g) stays above exp(lower_bound).
    """
    check_choice("form", form, GATE_FORMS)
    lb = check_float("lower_bound", lower_bound, -88.0, 0.0)
    z = _check_float_tensor("z", z, 4, "[B, T, H, K]")
    H, K = z.shape[-2:]
    A_log = _check_float_tensor("A_log", A_log, 1, "[H]")
    _check_shape("A_log", A_log, (H,), "[H]")
    if dt_bias is not None:
        dt_bias = _check_float_tensor("dt_bias", dt_bias, 1, "[H*K]")
        _check_shape("dt_bias", dt_bias, (H * K,), "[H*K]")
        z = z + dt_bias.view(H, K)  # [B, T, H, K]
    a = A_log.exp()[:, None]  # [H, 1]
    if form == "softplus":
        return -a * F.softplus(z)  # [B, T, H, K]
    return lb * torch.sigmoid(a * z)  # [B, T, H, K]


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
    return _step(q_t, k_t, v_t, g_t, beta_t, state, _check_scale(scale, K))


def _initial(state: torch.Tensor | None, v: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    B, _, H, K, V = shape
    return v.new_zeros(B, H, K, V) if state is None else state.clone()


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
    scale = _check_scale(scale, shape[3])
    S = _initial(initial_state, v, shape)
    outputs = []
    for t in range(shape[1]):
        o_t, S = _step(q[:, t], k[:, t], v[:, t], g[:, t], beta[:, t], S, scale)
        outputs.append(o_t)
    if not outputs:
        return v.new_zeros(shape[0], 0, shape[2], shape[4]), S
    return torch.stack(outputs, dim=1), S  # [B, T, H, V]


def kda_chunked(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    chunk_size: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The fast chunked (WY) form; same contract as kda_recurrent, any T (ragged last chunk).

    chunk_size must be a power of two in [1, 1024] (a shorter chunk is used when T is smaller).
    Computes in the input dtype; no exponent can overflow, whatever the gates (see
    core/kda_chunked.py: anchored 16-token sub-chunks while |g| <= 5.08 in fp32, recursive
    halving otherwise). Agrees with kda_recurrent to ~1e-13 in float64.
    """
    shape = check_tokens(q, k, v, g, beta, initial_state, step=False)
    chunk = check_int("chunk_size", chunk_size, 1, 1024)
    if chunk & (chunk - 1):
        raise ParamError(f"chunk_size must be a power of two in [1, 1024], got {chunk}")
    scale = _check_scale(scale, shape[3])
    S = _initial(initial_state, v, shape)
    return chunked_scan(q, k, v, g, beta, scale, S, chunk)


def segment_transition(k: torch.Tensor, g: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """M = A_T ... A_1 with A_t = (I - beta_t k_t k_t^T) Diag(exp(g_t)), per head.

    k, g [B, T, H, K]; beta [B, T, H]. Returns M [B, H, K, K]: a segment maps any start state
    S0 [B, H, K, V] to M @ S0 + S_ext, where S_ext is the segment's state from zeros
    (the basis of context parallelism).
    """
    k = _check_float_tensor("k", k, 4, "[B, T, H, K]")
    g = _check_float_tensor("g", g, 4, "[B, T, H, K]")
    beta = _check_float_tensor("beta", beta, 3, "[B, T, H]")
    _check_shape("g", g, tuple(k.shape), "[B, T, H, K]")
    _check_shape("beta", beta, tuple(k.shape[:3]), "[B, T, H]")
    _check_dtype(k, g=g, beta=beta)
    B, T, H, K = k.shape
    M = torch.eye(K, dtype=k.dtype).expand(B, H, K, K).clone()  # [B, H, K, K]
    for t in range(T):
        M = M * g[:, t].exp().unsqueeze(-1)  # [B, H, K, K]
        kM = (M * k[:, t].unsqueeze(-1)).sum(-2)  # [B, H, K]
        M = M - (beta[:, t, :, None] * k[:, t]).unsqueeze(-1) * kM.unsqueeze(-2)
    return M
