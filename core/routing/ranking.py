"""Ranking helpers shared by select_experts, its twin and the meters.

The true ranking of a row: its experts by descending score, ties to the lower id. top_ranks
gives a row's best m in that order from torch.topk (fast; its order among equal scores is
unspecified, so rows with a tie among the best m + 1 are re-ranked with a stable sort);
rank_order gives the whole ranking by a stable sort.
"""

from __future__ import annotations

import torch

from core.errors import ParamError
from core.routing.config import RouteConfig

TINY = torch.finfo(torch.float32).tiny  # cache_prior's floor under a score before the log


def top_ranks(scores: torch.Tensor, m: int) -> torch.Tensor:
    """scores [N, E] -> the ids of each row's best m experts in rank order [N, m].

    torch.topk, whose order among equal scores is unspecified, then a stable sort of the few
    rows where two of the best m + 1 scores are equal (so ties go to the lower id).
    """
    N, E = scores.shape
    vals, ids = scores.topk(min(m + 1, E), dim=-1)  # [N, m + 1] descending
    tied = (vals[:, 1:] == vals[:, :-1]).any(1)  # [N]
    if bool(tied.any()):
        rows = tied.nonzero()[:, 0]
        ids[rows] = rank_order(scores[rows])[:, : ids.shape[1]]
    return ids[:, :m]


def rank_order(scores: torch.Tensor) -> torch.Tensor:
    """scores [N, E] -> expert ids [N, E] by descending score, ties to the lower id."""
    return torch.sort(scores, dim=-1, descending=True, stable=True).indices


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


def compact(chosen: torch.Tensor, k: int) -> torch.Tensor:
    """chosen bool [N, m] with exactly k per row -> their column indices, ascending [N, k]."""
    N, m = chosen.shape
    slot = torch.where(chosen, chosen.cumsum(1) - 1, k)  # [N, m] output slot, k = dropped
    cols = torch.arange(m).expand(N, m)
    return torch.zeros(N, k + 1, dtype=torch.int64).scatter_(1, slot, cols)[:, :k]
