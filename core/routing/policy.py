"""RoutePolicy: select_experts as the MoE's selection policy, with meters per layer and phase.

A provider carries it (ExpertProvider.policy); the MoE calls `select(layer, scores, resident)`
once per layer and forward, with one residency snapshot for every row of that call. So a
prefill's rows all see the residency of the moment the layer started (stale for later rows,
as in colibri), while decode sees it fresh at every token. Meters are kept apart for prefill
(calls with more than one row) and decode (one row), as reference section 6 recommends: a
swap rate that mixes the two is neither. The policy keeps each call's scores and Selection
and computes the meters when asked, in one batch per layer, so the timed decode pays only for
the selection itself (its wall time is kept in `seconds`, per phase).
"""

from __future__ import annotations

import time
from dataclasses import fields

import torch

from core.errors import ParamError, check_int
from core.routing.config import RouteConfig
from core.routing.meters import LayerMeters, MeterSum, combine, route_meters
from core.routing.select import Selection, select_experts

PHASES = ("prefill", "decode")


def cat_selections(sels: list[Selection]) -> Selection:
    """Selections of consecutive calls as one (rows in call order)."""
    return Selection(**{f.name: torch.cat([getattr(s, f.name) for s in sels])
                        for f in fields(Selection)})


class RoutePolicy:
    def __init__(self, cfg: RouteConfig, n_layers: int) -> None:
        if not isinstance(cfg, RouteConfig):
            raise ParamError(f"cfg must be a RouteConfig, got {type(cfg).__name__}")
        self.cfg = cfg
        self.n_layers = check_int("n_layers", n_layers, 1)
        self.calls: dict[str, list[list[tuple[torch.Tensor, Selection]]]] = {
            ph: [[] for _ in range(n_layers)] for ph in PHASES}
        self.seconds = dict.fromkeys(PHASES, 0.0)  # wall time inside select_experts

    def select(self, layer: int, scores: torch.Tensor, resident: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """scores [N, E], resident bool [E] -> (ids [N, k], weights [N, k]); the call is kept."""
        phase = "decode" if scores.shape[0] == 1 else "prefill"
        t0 = time.perf_counter()
        sel = select_experts(scores, resident, self.cfg)
        self.seconds[phase] += time.perf_counter() - t0
        self.calls[phase][layer].append((scores.detach(), sel))
        return sel.ids, sel.weights

    def selections(self, layer: int, phase: str = "decode") -> tuple[torch.Tensor, Selection]:
        """(scores [R, E], Selection over R rows) of every call of one layer in one phase."""
        calls = self.calls[_phase(phase)][layer]
        if not calls:
            z = torch.zeros(0, self.cfg.k, dtype=torch.int64)
            return torch.zeros(0, 0), Selection(ids=z, weights=z.float(), kind=z.to(torch.int8),
                                                swaps=z[:, 0], window=z[:, 0],
                                                fallback=z[:, 0].bool())
        return torch.cat([s for s, _ in calls]), cat_selections([sel for _, sel in calls])

    def layers(self, phase: str = "decode") -> tuple[LayerMeters, ...]:
        """LayerMeters of every layer in one phase so far."""
        out = []
        for layer in range(self.n_layers):
            m = MeterSum()
            scores, sel = self.selections(layer, phase)
            if scores.shape[0]:
                m.add(route_meters(scores, sel), self.cfg.k)
            out.append(m.summary())
        return tuple(out)

    def total(self, phase: str = "decode") -> LayerMeters:
        """Every layer of one phase as one LayerMeters."""
        return combine(self.layers(phase))


def _phase(phase: str) -> str:
    if phase not in PHASES:
        raise ParamError(f"phase must be one of {list(PHASES)}, got {phase!r}")
    return phase
