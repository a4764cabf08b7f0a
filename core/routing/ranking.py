"""Ranking helpers shared by select_experts, its twin and the meters.

The true ranking of a row: its experts by descending score, ties to the lower id. rank_order
gives the whole ranking with one sort of 64-bit keys, (descending score, id): the score's
float32 bits mapped to an integer that orders like the float (-0.0 read as +0.0), above the
expert id. The keys are distinct, so any sort is a stable one, and numpy's (SIMD) sort of
int64 is several times faster on CPU than torch.topk on the same scores, let alone torch's
stable sort. top_ranks(scores, m) is its first m columns. Scores must not hold NaN (callers
read NaN as -inf first): a NaN's place would follow its sign bit.
"""

from __future__ import annotations

import torch

from core.errors import ParamError
from core.routing.config import RouteConfig

TINY = torch.finfo(torch.float32).tiny  # cache_prior's floor under a score before the log


def rank_keys(scores: torch.Tensor) -> torch.Tensor:
    """scores [N, E] float32 -> int64 keys [N, E] whose ascending order is the true ranking."""
    N, E = scores.shape
    bits = (scores.detach() + 0.0).view(torch.int32)  # [N, E]; + 0.0 turns -0.0 into +0.0
    desc = ~(bits ^ ((bits >> 31) & 0x7FFFFFFF))  # [N, E] int32, orders like -score
    ids = torch.arange(E, dtype=torch.int32).expand(N, E)
    # NOTE: little-endian int64 = (high word, low word) = (desc, id); id >= 0, so the signed
    # order of the keys is desc's, then id's
    return torch.stack((ids, desc), -1).view(torch.int64)[..., 0]  # [N, E]


def sorted_keys(keys: torch.Tensor) -> torch.Tensor:
    """rank_keys [N, E] -> a sorted copy [N, E] (numpy's SIMD sort of int64, by row)."""
    out = keys.clone()
    out.numpy().sort(axis=-1)  # in place, through a shared view
    return out


def key_ids(keys: torch.Tensor, m: int | None = None) -> torch.Tensor:
    """The expert ids (low words) of keys [N, E], first m columns -> int64 [N, m]."""
    words = keys.view(torch.int32)  # [N, 2E]: (id, desc) per key
    return words[:, 0 : 2 * (m if m is not None else keys.shape[1]) : 2].to(torch.int64)


def rank_order(scores: torch.Tensor) -> torch.Tensor:
    """scores [N, E] -> expert ids [N, E] by descending score, ties to the lower id."""
    if scores.dtype != torch.float32:
        raise ParamError(f"scores must be float32, got {scores.dtype}")
    return key_ids(sorted_keys(rank_keys(scores)))


def top_ranks(scores: torch.Tensor, m: int) -> torch.Tensor:
    """scores [N, E] -> the ids of each row's best m experts in rank order [N, m]."""
    if scores.dtype != torch.float32:
        raise ParamError(f"scores must be float32, got {scores.dtype}")
    return key_ids(sorted_keys(rank_keys(scores)), m)


def check_inputs(scores: object, resident: object, cfg: object) -> torch.Tensor:
    """Validate; returns resident as bool [N, E] (a view when it was one snapshot [E])."""
    if not isinstance(cfg, RouteConfig):
        raise ParamError(f"cfg must be a RouteConfig, got {type(cfg).__name__}")
    if not isinstance(scores, torch.Tensor) or scores.dim() != 2 or \
            scores.dtype != torch.float32:
        raise ParamError("scores must be a float32 tensor [N, E]")
    N, E = scores.shape
    cfg.check_experts(E)
    if not isinstance(resident, torch.Tensor) or resident.dtype != torch.bool or \
            tuple(resident.shape) not in ((E,), (N, E)):
        raise ParamError(f"resident must be a bool tensor [E] or [N, E] with E = {E}, "
                         f"got {getattr(resident, 'shape', type(resident).__name__)}")
    return resident.expand(N, E)

