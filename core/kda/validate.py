"""Validation of KDA inputs: shapes, dtypes and the scale, with ParamError naming the tensor.

Layout (flash-linear-attention's): q, k, g [B, T, H, K]; v [B, T, H, V]; beta [B, T, H];
state [B, H, K, V]. A single token drops the T axis.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from core.errors import ParamError, check_float


def float_tensor(name: str, x: object, rank: int, layout: str) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise ParamError(f"{name} must be a floating-point tensor {layout}, got {type(x).__name__}")
    if x.dim() != rank:
        raise ParamError(f"{name} must be {rank}-D {layout}, got shape {tuple(x.shape)}")
    return x


def expect_shape(name: str, x: torch.Tensor, shape: tuple[int, ...], layout: str) -> None:
    if tuple(x.shape) != shape:
        raise ParamError(f"{name} must have shape {layout} = {shape}, got {tuple(x.shape)}")


def same_dtype(ref: torch.Tensor, **tensors: torch.Tensor) -> None:
    for name, x in tensors.items():
        if x.dtype != ref.dtype:
            raise ParamError(f"{name} must have dtype {ref.dtype} like q, got {x.dtype}")


def check_scale(scale: float | None, K: int) -> float:
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
    q = float_tensor("q", q, 3 if step else 4, f"[B, {t}H, K]")
    lead = tuple(q.shape[:-1])
    K = q.shape[-1]
    k = float_tensor("k", k, q.dim(), f"[B, {t}H, K]")
    g = float_tensor("g", g, q.dim(), f"[B, {t}H, K]")
    v = float_tensor("v", v, q.dim(), f"[B, {t}H, V]")
    beta = float_tensor("beta", beta, q.dim() - 1, f"[B, {t}H]")
    expect_shape("k", k, tuple(q.shape), f"[B, {t}H, K]")
    expect_shape("g", g, tuple(q.shape), f"[B, {t}H, K]")
    expect_shape("v", v, (*lead, v.shape[-1]), f"[B, {t}H, V]")
    expect_shape("beta", beta, lead, f"[B, {t}H]")
    same_dtype(q, k=k, v=v, g=g, beta=beta)
    V = v.shape[-1]
    if K < 1 or V < 1:
        raise ParamError(f"K and V (the last axes of q and v) must be >= 1, got K={K}, V={V}")
    if state is not None:
        state = float_tensor("state", state, 4, "[B, H, K, V]")
        expect_shape("state", state, (lead[0], lead[-1], K, V), "[B, H, K, V]")
        same_dtype(q, state=state)
    return (*lead, K, V)


def start_state(
    state: torch.Tensor | None, v: torch.Tensor, shape: tuple[int, ...]
) -> torch.Tensor:
    """A clone of the given state [B, H, K, V], or zeros like v when it is None."""
    B, _, H, K, V = shape
    return v.new_zeros(B, H, K, V) if state is None else state.clone()


def pad_to_chunks(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
    C: int,
) -> tuple[int, tuple[torch.Tensor, ...]]:
    """Pad the T axis to N whole chunks of C with null tokens (zeros: they leave the state
    untouched); returns (N, (q, k, v, g, beta)) with T padded to N * C."""
    N = -(-q.shape[1] // C)
    pad = N * C - q.shape[1]
    if pad:
        q, k, v, g = (F.pad(x, (0, 0, 0, 0, 0, pad)) for x in (q, k, v, g))
        beta = F.pad(beta, (0, 0, 0, pad))
    return N, (q, k, v, g, beta)
