"""Why speculative decoding pays, and where it stops: weight bytes a verify pass reads per byte
it writes, on the tiny model.

Decoding is memory-bound: a forward pass reads every weight it uses once, however many window
positions it runs. Per verify pass of window w = gamma + 1 (the pending byte and gamma drafts):
  expected_bytes(a, gamma)   (1 - a^(gamma + 1)) / (1 - a): bytes a pass writes when each draft
                             is accepted with probability a, independently (a = 1: gamma + 1),
                             never more than 1 / (1 - a)
  distinct[w - 1]            experts one layer's w consecutive positions pick between them,
                             measured on the model's recorded routing (the shipped trace: held-out
                             text, windows that stay inside one recorded 256-byte passage)
  read(w)                    trunk + n_layers x distinct(w) x expert bytes: the trunk (every
                             parameter but the embedding table, a lookup) once, each distinct
                             expert once
  cost(a, gamma)             read(gamma + 1) / expected_bytes(a, gamma) / read(1): weight bytes
                             per byte written, a share of plain decoding's
The verify tax is distinct(w) > top_k: a wider window reads more experts, which is what stops
a longer draft from paying. `shared=True` removes it (every position picks the same experts);
`per_position=True` reads the weights once per position instead of once per pass.

verify_tax(part) -> VerifyTax   cached (single-flight); part: "all" the whole trace, "first" or
                                "second" its halves (the measure on two samples of text)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import check_choice, check_float, check_int
from core.experiments.flight import single_flight
from core.experiments.shipped import trace as shipped_trace
from core.model.manifest import shipped_dims
from core.serve.limits import MAX_DRAFT

PASSAGE = 256  # the trace's recorded passages (core.model.trace: independent 256-byte windows)
PARTS = ("all", "first", "second")


def expected_bytes(a: float, gamma: int) -> float:
    a = check_float("a", a, 0.0, 1.0)
    gamma = check_int("gamma", gamma, 0, 1 << 10)
    return float(gamma + 1) if a == 1.0 else (1 - a ** (gamma + 1)) / (1 - a)


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyTax:
    part: str
    distinct: tuple[float, ...]  # [w - 1] for w = 1 .. MAX_DRAFT + 1: experts per layer
    top_k: int
    n_layers: int
    expert_bytes: int
    trunk_bytes: int  # read once per pass

    def read(self, w: int, shared: bool = False) -> float:
        """Weight bytes one pass of w positions reads."""
        per_layer = self.top_k if shared else self.distinct[w - 1]
        return self.trunk_bytes + self.n_layers * per_layer * self.expert_bytes

    def cost(self, a: float, gamma: int, shared: bool = False,
             per_position: bool = False) -> float:
        """Weight bytes read per byte written, a share of plain decoding's."""
        w = gamma + 1
        read = w * self.read(1) if per_position else self.read(w, shared)
        return read / expected_bytes(a, gamma) / self.read(1)

    def best_gamma(self, a: float, shared: bool = False) -> int:
        gammas = range(1, MAX_DRAFT + 1)
        return min(gammas, key=lambda g: (self.cost(a, g, shared), g))


@single_flight(len(PARTS))
def verify_tax(part: str = "all") -> VerifyTax:
    part = str(check_choice("part", part, PARTS))
    chosen = shipped_trace().chosen  # [N, L, k] expert ids
    n = len(chosen)
    passages = [chosen[s: s + PASSAGE] for s in range(0, n, PASSAGE)]
    half = len(passages) // 2
    passages = {"all": passages, "first": passages[:half], "second": passages[half:]}[part]
    distinct = []
    for w in range(1, MAX_DRAFT + 2):
        counts = [len(np.unique(p[i: i + w, layer]))
                  for p in passages for i in range(len(p) - w + 1)
                  for layer in range(p.shape[1])]
        distinct.append(float(np.mean(counts)))
    d = shipped_dims()
    trunk = (d.trunk_params - d.vocab * d.d_model) * d.bytes_per_param
    return VerifyTax(part=part, distinct=tuple(distinct), top_k=d.top_k, n_layers=d.n_layers,
                     expert_bytes=d.expert_bytes, trunk_bytes=trunk)
