"""Routing meters: how far a Selection is from stock top-k, per row and per layer.

Per row, with p = the stock weights (the true top-k scores renormalised over the true top-k)
and q = the chosen weights (Selection.weights), both as vectors over all E experts:
  swap          swaps / k: the fraction of slots given to an expert outside the true top-k
  agree         1 - swap, exactly (colibri's route_agree = |chosen & true| / k is this number
                whenever the chosen ids are distinct, which select_experts guarantees; overlap
                counts |chosen & true| independently so the tests can hold the identity)
  dropped_mass  the p-mass of the true top-k experts that were not chosen
  l1_shift      sum_e |p_e - q_e| over the union of both sets (0..2)
  kl            KL(p || q) in nats, q read as 1e-6 for a dropped expert
  kl_colibri    the same with colibri's floor, 1e-12: a dropped expert contributes about
                p_t * (27.6 + ln p_t), so it is a rescaled swap count, not a quality measure
With no swap the chosen set is the true set and alpha is inert, so every meter is exactly 0.
None of these says what a swap does to the output: core.routing.quality measures that.
Fallback rows (non-finite scores) count as rows and slots with 0 swaps; their distribution
meters are NaN per row and left out of the layer means (LayerMeters.fallback counts them).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple

import torch

from core.routing.ranking import top_ranks
from core.routing.select import Selection

KL_FLOOR = 1e-6
COLIBRI_KL_FLOOR = 1e-12


class RowMeters(NamedTuple):
    swaps: torch.Tensor  # [N] int64, chosen experts outside the true top-k
    swap: torch.Tensor  # [N] float64, swaps / k
    agree: torch.Tensor  # [N] float64, 1 - swap
    overlap: torch.Tensor  # [N] int64, |chosen & true top-k|
    dropped_mass: torch.Tensor  # [N] float64
    l1_shift: torch.Tensor  # [N] float64
    kl: torch.Tensor  # [N] float64, floor KL_FLOOR
    kl_colibri: torch.Tensor  # [N] float64, floor COLIBRI_KL_FLOOR
    fallback: torch.Tensor  # [N] bool


def _kl(p: torch.Tensor, q: torch.Tensor, chosen: torch.Tensor, floor: float) -> torch.Tensor:
    """sum over the true experts (p > 0) of p log(p / q), q floored where not chosen."""
    q_eff = torch.where(chosen, q, torch.full_like(q, floor))  # [N, E]
    terms = torch.where(p > 0, p * (p.clamp_min(1e-300).log() - q_eff.clamp_min(1e-300).log()),
                        torch.zeros_like(p))
    return terms.sum(1)


def route_meters(scores: torch.Tensor, sel: Selection) -> RowMeters:
    """scores [N, E] float32 and the Selection made from them -> per-row meters (float64)."""
    N, E = scores.shape
    k = sel.ids.shape[1]
    s = torch.nan_to_num(scores, nan=-torch.inf)  # [N, E]
    true = top_ranks(s, k)  # [N, k]
    top = s.gather(1, true)  # [N, k]
    # NOTE: p in the scores' precision, as the stock MoE computes it, so a stock choice has
    # q == p to the bit and every meter is exactly 0
    stock = (top / top.sum(1, keepdim=True)).double()  # [N, k]
    p = torch.zeros(N, E, dtype=torch.float64).scatter_(1, true, stock)
    q = torch.zeros(N, E, dtype=torch.float64).scatter_(1, sel.ids, sel.weights.double())
    in_true = torch.zeros(N, E, dtype=torch.bool).scatter_(1, true, True)  # [N, E]
    chosen = torch.zeros(N, E, dtype=torch.bool).scatter_(1, sel.ids, True)
    overlap = (in_true & chosen).sum(1)  # [N]
    swap = sel.swaps.double() / k
    nan = torch.full((N,), torch.nan, dtype=torch.float64)

    def valid(x: torch.Tensor) -> torch.Tensor:
        return torch.where(sel.fallback, nan, x)

    return RowMeters(
        swaps=sel.swaps.clone(), swap=swap, agree=1.0 - swap,
        overlap=torch.where(sel.fallback, k, overlap),
        dropped_mass=valid((p * ~chosen).sum(1)), l1_shift=valid((p - q).abs().sum(1)),
        kl=valid(_kl(p, q, chosen, KL_FLOOR)),
        kl_colibri=valid(_kl(p, q, chosen, COLIBRI_KL_FLOOR)), fallback=sel.fallback.clone())


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerMeters:
    """Meters of one layer (or of several, summed) over every row it routed."""

    rows: int
    slots: int  # rows * k
    swaps: int
    fallback: int  # rows that fell back to stock (non-finite scores)
    dropped_mass: float  # means over the rows that did not fall back
    l1_shift: float
    kl: float
    kl_colibri: float

    @property
    def swap(self) -> float:
        """Substituted slots / slots (0 when nothing was routed)."""
        return self.swaps / self.slots if self.slots else 0.0

    @property
    def agree(self) -> float:
        """= 1 - swap, exactly: colibri's route_agree restates the swap rate."""
        return 1.0 - self.swap


class MeterSum:
    """Running sums of one layer's RowMeters; summary() gives its LayerMeters."""

    def __init__(self) -> None:
        self.rows = self.slots = self.swaps = self.fallback = self.valid = 0
        self.sums = {"dropped_mass": 0.0, "l1_shift": 0.0, "kl": 0.0, "kl_colibri": 0.0}

    def add(self, m: RowMeters, k: int) -> None:
        n = int(m.swap.shape[0])
        ok = ~m.fallback  # [N]
        self.rows += n
        self.slots += n * k
        self.swaps += int(m.swaps.sum())
        self.fallback += int(m.fallback.sum())
        self.valid += int(ok.sum())
        for name in self.sums:
            self.sums[name] += float(getattr(m, name)[ok].sum())

    def summary(self) -> LayerMeters:
        means = {name: v / self.valid if self.valid else 0.0 for name, v in self.sums.items()}
        return LayerMeters(rows=self.rows, slots=self.slots, swaps=self.swaps,
                           fallback=self.fallback, **means)


def combine(layers: list[LayerMeters] | tuple[LayerMeters, ...]) -> LayerMeters:
    """Several layers' meters as one: counts summed, means weighted by their valid rows."""
    rows = sum(m.rows for m in layers)
    valid = sum(m.rows - m.fallback for m in layers)
    means = {}
    for f in fields(LayerMeters)[4:]:
        total = sum(getattr(m, f.name) * (m.rows - m.fallback) for m in layers)
        means[f.name] = total / valid if valid else 0.0
    return LayerMeters(rows=rows, slots=sum(m.slots for m in layers),
                       swaps=sum(m.swaps for m in layers),
                       fallback=sum(m.fallback for m in layers), **means)
