"""RouteConfig: one frozen, validated set of cache-aware routing knobs, and the slot kinds.

Knobs (colibri's names; reference/cache-routing.md sections 3 and 9):
  method  topk | max_rank | cum_prob | cache_prior
  k       experts chosen per row (the model's top-k)
  J       sacred ranks: the true top-J are always taken, resident or not (max_rank, cum_prob);
          0..k, and J = k is valid and gives stock
  M       the window of ranks a resident substitute may come from (max_rank); k..E
  P       the cumulative-probability window's mass (cum_prob); in (0, 1)
  alpha   each substitute's weight is multiplied by alpha before renormalising (max_rank,
          cum_prob); in (0, 1], 1 is off
  lam     cache_prior's residency bonus, in units of the row's log-score range; >= 0, 0 is stock
A knob a method does not read is still validated, so a config is valid or not on its own.
Every bad value raises ParamError naming the knob and its range; nothing is clamped (colibri
clamps J and alpha and ignores P silently). k <= E, and M <= E for max_rank, need E, so
select_experts checks them against the scores it is given.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass

from core.errors import ParamError, check_choice, check_int

METHODS = ("topk", "max_rank", "cum_prob", "cache_prior")

# Slot kinds: how a chosen expert got its slot (Selection.kind holds these codes).
STOCK, SACRED, RESIDENT_FILL, BACKFILL = 0, 1, 2, 3
KINDS = ("stock", "sacred", "resident fill", "backfill")


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParamError(f"{name} must be a finite number, got {value!r}")
    return float(value)


@dataclass(frozen=True, slots=True)
class RouteConfig:
    method: str = "topk"  # the one field that may be positional: RouteConfig("max_rank")
    _: KW_ONLY
    k: int = 2
    J: int = 1
    M: int = 8
    P: float = 0.9
    alpha: float = 1.0
    lam: float = 0.0

    def __post_init__(self) -> None:
        check_choice("method", self.method, METHODS)
        k = check_int("k", self.k, 1)
        check_int("J", self.J, 0, k)  # "J must be in [0, k]"
        if isinstance(self.M, bool) or not isinstance(self.M, int) or self.M < k:
            raise ParamError(f"M must be an integer in [k, E] = [{k}, E], got {self.M!r}")
        P = _number("P", self.P)
        if not 0.0 < P < 1.0:
            raise ParamError(f"P must be in (0, 1), got {P}")
        alpha = _number("alpha", self.alpha)
        if not 0.0 < alpha <= 1.0:
            raise ParamError(f"alpha must be in (0, 1], got {alpha}")
        if _number("lam", self.lam) < 0.0:
            raise ParamError(f"lam must be in [0, inf), got {self.lam}")

    def check_experts(self, n_experts: int) -> None:
        """Raise ParamError unless k <= E and (max_rank, which reads M) M <= E."""
        if self.k > n_experts:
            raise ParamError(f"k must be in [1, E] = [1, {n_experts}], got {self.k}")
        if self.method == "max_rank" and self.M > n_experts:
            raise ParamError(f"M must be in [k, E] = [{self.k}, {n_experts}], got {self.M}")

    @property
    def stock(self) -> bool:
        """Whether this config chooses the true top-k by construction, whatever is resident."""
        return (self.method == "topk" or (self.method == "max_rank" and (self.J == self.k
                or self.M == self.k)) or (self.method == "cum_prob" and self.J == self.k)
                or (self.method == "cache_prior" and self.lam == 0.0))

    def label(self) -> str:
        """Short text for tables: the method and the knobs it reads."""
        if self.method == "topk":
            return f"topk k={self.k}"
        if self.method == "max_rank":
            return f"max_rank J={self.J} M={self.M} alpha={self.alpha:g}"
        if self.method == "cum_prob":
            return f"cum_prob J={self.J} P={self.P:g} alpha={self.alpha:g}"
        return f"cache_prior lam={self.lam:g}"
