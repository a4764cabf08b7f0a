"""Context parallelism for KDA prefill: split, run segments from zeros, merge exactly.

A long prompt's KDA tokens are cut into P contiguous segments (one per rank). Each segment
computes, independently and from a zero state (reference §10, fla `ops/cp`):
  S_ext  its own final state from zeros (the chunked form, the fast path)
  M      its transition A_T ... A_1, A_t = (I - beta_t k_t k_t^T) Diag(exp(g_t))
The recurrence is affine in the state, so the merge S <- M_j S + S_ext_j folded over the
segments in order reproduces the sequential state exactly (float64: max abs <= 1e-10 vs
kda_recurrent). Each rank then reruns its segment from its true incoming state for the outputs.

Communication, bytes RECEIVED per rank, per layer:
  KDA all-gather  (P - 1) [S_ext, M] messages, each H (d_k d_v + d_k d_k) x 4 B (fp32: M must
                  stay fp32), plus a (conv - 1)-token halo of q|k|v raw inputs from the
                  predecessor. None of it depends on T.
  KDA scan        the point-to-point alternative: one [S, M] message, but P - 1 sequential hops.
  MLA ring        (P - 1) / P x T tokens of latent KV (every other rank's shard passes by once).
The crossover T* = P x KDA / ((P - 1) x bytes per token) is where one MLA layer's ring moves as
much as one KDA layer's all-gather (about 87k tokens at P = 8 for K3): below it, KDA moves MORE.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from core.dims import K3
from core.errors import ParamError, check_int
from core.kda.chunked import kda_chunked
from core.kda.transition import segment_transition
from core.kda.validate import check_tokens

if TYPE_CHECKING:  # core.model imports core.kda
    from core.model.config import ModelDims

MAX_RANKS = 1024
STATE_BYTES = 4  # S and M travel in fp32 (M in bf16 loses the exact merge)


# ---- the exact split and merge ---------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class CPPrefill:
    """One context-parallel prefill: per segment its bounds, transition and incoming state."""

    bounds: tuple[tuple[int, int], ...]  # [start, end) per rank
    transitions: tuple[torch.Tensor, ...]  # M_j [B, H, K, K]
    local_states: tuple[torch.Tensor, ...]  # S_ext_j [B, H, K, V]: segment j from zeros
    incoming: tuple[torch.Tensor, ...]  # the merged state entering segment j [B, H, K, V]
    final_state: torch.Tensor  # [B, H, K, V]
    outputs: torch.Tensor  # [B, T, H, V], each segment rerun from its incoming state


def segment_bounds(tokens: int, ranks: int) -> tuple[tuple[int, int], ...]:
    """[start, end) of P contiguous segments as equal as possible (the first T % P one longer)."""
    T = check_int("tokens", tokens, 1)
    P = check_int("ranks", ranks, 1, min(MAX_RANKS, T))
    size, extra = divmod(T, P)
    out, start = [], 0
    for r in range(P):
        end = start + size + (r < extra)
        out.append((start, end))
        start = end
    return tuple(out)


def merge_states(transitions: list[torch.Tensor] | tuple[torch.Tensor, ...],
                 local_states: list[torch.Tensor] | tuple[torch.Tensor, ...],
                 initial_state: torch.Tensor | None = None) -> list[torch.Tensor]:
    """Fold S <- M_j S + S_ext_j in segment order; returns the state entering each segment
    and, last, the final state (len = P + 1). initial_state None: zeros."""
    if len(transitions) != len(local_states) or not transitions:
        raise ParamError(f"transitions and local_states must be non-empty and of equal length, "
                         f"got {len(transitions)} and {len(local_states)}")
    S = initial_state if initial_state is not None else torch.zeros_like(local_states[0])
    states = [S]
    for M, S_ext in zip(transitions, local_states, strict=True):
        S = M @ S + S_ext  # [B, H, K, K] @ [B, H, K, V]
        states.append(S)
    return states


def cp_prefill(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor,
               beta: torch.Tensor, ranks: int, initial_state: torch.Tensor | None = None,
               scale: float | None = None) -> CPPrefill:
    """Split q, k, g [B, T, H, K]; v [B, T, H, V]; beta [B, T, H] over `ranks` segments.

    Every segment's (M, S_ext) is computed without any other segment's data; the merge is the
    only step that needs them all. Outputs rerun each segment from its merged incoming state.
    """
    shape = check_tokens(q, k, v, g, beta, initial_state, step=False)
    bounds = segment_bounds(shape[1], ranks)
    Ms, locals_ = [], []
    for a, b in bounds:  # independent: one rank each
        x = [t[:, a:b] for t in (q, k, v, g, beta)]
        Ms.append(segment_transition(x[1], x[3], x[4]))
        locals_.append(kda_chunked(*x, scale=scale)[1])
    states = merge_states(Ms, locals_, initial_state)
    outs = [kda_chunked(*(t[:, a:b] for t in (q, k, v, g, beta)), scale=scale,
                        initial_state=states[j])[0] for j, (a, b) in enumerate(bounds)]
    return CPPrefill(bounds=bounds, transitions=tuple(Ms), local_states=tuple(locals_),
                     incoming=tuple(states[:-1]), final_state=states[-1],
                     outputs=torch.cat(outs, 1))


# ---- communication volume ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class CPGeometry:
    """What context parallelism moves, per layer: KDA head geometry and MLA bytes per token."""

    name: str
    kda_heads: int
    d_k: int
    d_v: int
    conv_size: int
    act_bytes: int  # bytes per element of the halo's raw inputs
    mla_bytes_per_token: int
    n_kda: int
    n_mla: int

    @property
    def message_bytes(self) -> int:
        """One rank's [S_ext, M] for one KDA layer: H (d_k d_v + d_k d_k) fp32."""
        return self.kda_heads * (self.d_k * self.d_v + self.d_k * self.d_k) * STATE_BYTES

    @property
    def halo_bytes(self) -> int:
        """(conv - 1) tokens of q|k|v raw inputs from the predecessor, one KDA layer."""
        return (self.conv_size - 1) * self.kda_heads * (2 * self.d_k + self.d_v) * self.act_bytes


def toy_cp(dims: ModelDims) -> CPGeometry:
    """The tiny model: fp32 everywhere."""
    return CPGeometry(name="toy", kda_heads=dims.kda_heads, d_k=dims.kda_head_dim,
                      d_v=dims.kda_head_dim, conv_size=dims.conv_size,
                      act_bytes=dims.bytes_per_param,
                      mla_bytes_per_token=dims.mla_bytes_per_token, n_kda=dims.n_kda,
                      n_mla=dims.n_mla)


def k3_cp() -> CPGeometry:
    """Kimi K3: bf16 activations and MLA latents (1,152 B per token), fp32 S and M."""
    return CPGeometry(name="K3", kda_heads=K3.kda_heads, d_k=K3.kda_head_dim,
                      d_v=K3.kda_head_dim, conv_size=K3.conv_size, act_bytes=K3.bytes_per_param,
                      mla_bytes_per_token=K3.mla_bytes_per_token, n_kda=K3.n_kda, n_mla=K3.n_mla)


@dataclass(frozen=True, slots=True, kw_only=True)
class CPVolume:
    """Bytes received per rank at one (T, P), per layer and for the whole model."""

    tokens: int
    ranks: int
    kda_gather: int  # (P - 1) messages, one KDA layer
    kda_halo: int  # one KDA layer (0 at P = 1)
    kda_scan: int  # the point-to-point scan: one message (0 at P = 1) ...
    scan_hops: int  # ... over P - 1 sequential hops
    mla_ring: float  # one MLA layer: (P - 1) / P x T x bytes per token
    model_kda: int  # every KDA layer, all-gather + halo
    model_mla: float  # every MLA layer, ring

    @property
    def kda(self) -> int:
        """One KDA layer, all-gather plus halo."""
        return self.kda_gather + self.kda_halo


def cp_volume(geo: CPGeometry, tokens: int, ranks: int) -> CPVolume:
    T = check_int("tokens", tokens, 1, 1 << 40)
    P = check_int("ranks", ranks, 1, MAX_RANKS)
    others = P - 1
    gather = others * geo.message_bytes
    halo = geo.halo_bytes if others else 0
    ring = others / P * T * geo.mla_bytes_per_token
    return CPVolume(tokens=T, ranks=P, kda_gather=gather, kda_halo=halo,
                    kda_scan=geo.message_bytes if others else 0, scan_hops=others,
                    mla_ring=ring, model_kda=geo.n_kda * (gather + halo),
                    model_mla=geo.n_mla * ring)


def cp_crossover(geo: CPGeometry, ranks: int, whole_model: bool = False) -> float | None:
    """Tokens at which MLA's ring moves as many bytes as KDA's all-gather + halo (per layer, or
    over every layer with whole_model); None at P = 1 (nothing moves)."""
    P = check_int("ranks", ranks, 1, MAX_RANKS)
    if P == 1:
        return None
    kda = (P - 1) * geo.message_bytes + geo.halo_bytes
    per_token = (P - 1) / P * geo.mla_bytes_per_token
    if whole_model:
        kda, per_token = geo.n_kda * kda, geo.n_mla * per_token
    return kda / per_token


@dataclass(frozen=True, kw_only=True)
class CPSweep:
    """Volume vs sequence length at fixed P, ready to draw (one point per token count)."""

    geometry: CPGeometry
    ranks: int
    points: tuple[CPVolume, ...]
    crossover: float | None  # per layer
    model_crossover: float | None  # every KDA layer vs every MLA layer


def cp_sweep(geo: CPGeometry, ranks: int, tokens: tuple[int, ...] | list[int]) -> CPSweep:
    if not tokens:
        raise ParamError("tokens must list at least one sequence length")
    points = tuple(cp_volume(geo, t, ranks) for t in tokens)
    return CPSweep(geometry=geo, ranks=ranks, points=points,
                   crossover=cp_crossover(geo, ranks),
                   model_crossover=cp_crossover(geo, ranks, whole_model=True))
