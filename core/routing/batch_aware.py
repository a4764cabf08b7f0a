"""Batch-aware routing: tokens of one step share experts (after Lynx, arXiv 2411.08982).

`select_batch_aware(scores, cfg)` chooses each row of one layer call in turn with
select_experts' max-rank fill, taking as the preferred set (the `resident` mask select_experts
reads) the experts the rows before it in the same call have already chosen: ranks 0..J-1 are
sacred, then every already-chosen expert of ranks J..M-1 in rank order, then backfill. Row 0
finds nothing chosen yet, so it takes its true top-k; a later row takes an expert the batch
already needs whenever one sits in its window, so the step's union of experts (what a step
loads and runs) shrinks, and a row's choice depends on the rows before it: on its batch.

`BatchAwarePolicy` is the SelectionPolicy a provider carries (core.model.router): the MoE calls
it once per layer and forward with every row of the step; it ignores residency (the preferred
set is the step's own choice). It is off by default everywhere: the engine's batch-invariance
oracle covers stock routing only, and with this policy a request's text depends by design on
what shares its steps.

Oracle (tests/core/routing/test_batch_aware.py): hand-worked rows; every row equals
select_experts on that row with the preferred set recounted from the rows before it; row 0 and
J = k are stock; the union never exceeds stock's.
"""

from __future__ import annotations

import torch

from core.errors import ParamError
from core.routing.config import RouteConfig
from core.routing.policy import cat_selections
from core.routing.select import Selection, select_experts

__all__ = ["BatchAwarePolicy", "select_batch_aware"]


def select_batch_aware(scores: torch.Tensor, cfg: RouteConfig) -> Selection:
    """scores [N, E] router probabilities of one layer call, rows in batch order -> Selection.
    cfg must be a max_rank RouteConfig (J sacred ranks, window M)."""
    if not isinstance(cfg, RouteConfig) or cfg.method != "max_rank":
        raise ParamError(f"cfg must be a max_rank RouteConfig, got {cfg!r}")
    if not isinstance(scores, torch.Tensor) or scores.dim() != 2 or scores.shape[0] < 1:
        raise ParamError("scores must be a [N, E] tensor with N >= 1")
    chosen = torch.zeros(scores.shape[1], dtype=torch.bool)  # [E] the call's experts so far
    rows = []
    for n in range(scores.shape[0]):
        sel = select_experts(scores[n : n + 1], chosen, cfg)
        chosen[sel.ids[0]] = True
        rows.append(sel)
    return cat_selections(rows)


class BatchAwarePolicy:
    """select_batch_aware as the MoE's selection policy; counts the experts each layer call
    used (the step's union) and the slots it took outside the true top-k."""

    def __init__(self, cfg: RouteConfig) -> None:
        if not isinstance(cfg, RouteConfig) or cfg.method != "max_rank":
            raise ParamError(f"cfg must be a max_rank RouteConfig, got {cfg!r}")
        self.cfg = cfg
        self.swaps = 0  # chosen experts outside their row's true top-k, every call so far
        self.rows = 0

    def select(self, layer: int, scores: torch.Tensor, resident: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """scores [N, E] (resident is not read) -> (ids [N, k], weights [N, k])."""
        sel = select_batch_aware(scores, self.cfg)
        self.swaps += int(sel.swaps.sum())
        self.rows += scores.shape[0]
        return sel.ids, sel.weights
