"""RoutePolicy: select_experts as the MoE's selection policy, with meters per layer and phase.

A provider carries it (ExpertProvider.policy); the MoE calls `select(layer, scores, resident)`
once per layer and forward, with one residency snapshot for every row of that call. So a
prefill's rows all see the residency of the moment the layer started (stale for later rows,
as in colibri), while decode sees it fresh at every token. Meters are kept apart for prefill
(calls with more than one row) and decode (one row), as reference section 6 recommends: a
swap rate that mixes the two is neither.
"""

from __future__ import annotations

import torch

from core.errors import ParamError, check_int
from core.routing.config import RouteConfig
from core.routing.meters import LayerMeters, MeterSum, combine, route_meters
from core.routing.select import Selection, select_experts

PHASES = ("prefill", "decode")


class RoutePolicy:
    def __init__(self, cfg: RouteConfig, n_layers: int, keep: int = 0) -> None:
        """keep: how many of the latest decode selections to keep per layer (for figures)."""
        if not isinstance(cfg, RouteConfig):
            raise ParamError(f"cfg must be a RouteConfig, got {type(cfg).__name__}")
        self.cfg = cfg
        self.n_layers = check_int("n_layers", n_layers, 1)
        self.keep = check_int("keep", keep, 0)
        self.sums = {ph: [MeterSum() for _ in range(n_layers)] for ph in PHASES}
        self.kept: list[list[Selection]] = [[] for _ in range(n_layers)]

    def select(self, layer: int, scores: torch.Tensor, resident: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """scores [N, E], resident bool [E] -> (ids [N, k], weights [N, k]); meters updated."""
        sel = select_experts(scores, resident, self.cfg)
        phase = "decode" if scores.shape[0] == 1 else "prefill"
        self.sums[phase][layer].add(route_meters(scores, sel), self.cfg.k)
        if phase == "decode" and self.keep:
            kept = self.kept[layer]
            kept.append(sel)
            del kept[: max(0, len(kept) - self.keep)]
        return sel.ids, sel.weights

    def layers(self, phase: str = "decode") -> tuple[LayerMeters, ...]:
        """LayerMeters of every layer in one phase so far."""
        if phase not in PHASES:
            raise ParamError(f"phase must be one of {list(PHASES)}, got {phase!r}")
        return tuple(m.summary() for m in self.sums[phase])

    def total(self, phase: str = "decode") -> LayerMeters:
        """Every layer of one phase as one LayerMeters."""
        return combine(self.layers(phase))
