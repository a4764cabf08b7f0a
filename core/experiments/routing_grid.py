"""The Cache-aware routing tab's grid: every setting its controls reach, torch-free (the tab
declares its controls with these before torch loads; the precomputed sweep covers them all:
routing_sweep.py).

The controls: method (max_rank, cache_prior), the window M in k..E step 2 (cache_prior reads
lam = (M - k) / (E - k), so both run from stock to fully cache-driven), J in 0..k (J = k is
stock), alpha in ALPHAS (max_rank only), the capacity (CAPACITY_FRACTIONS of all experts).
Stock settings map to one topk config.

  DIMS, CAPACITIES, WINDOWS       the shipped model's shape (its manifest) and its grid
  capacities(d), windows(d)       the grid of any model's dims
  lam_of(M, d)                    cache_prior's lam at window slider position M
  stock_route(d), tab_route(method, M, J, alpha, d)   the RouteConfig behind a setting
  grid_routes(d)                  every routed (not stock) config the controls reach, in order
"""

from __future__ import annotations

from core.errors import check_choice, check_int
from core.model.config import ModelDims
from core.model.manifest import shipped_dims
from core.routing.config import RouteConfig

TAB_METHODS = ("max_rank", "cache_prior")
CAPACITY_FRACTIONS = (8, 4, 2)  # a capacity of all experts / f: 1/8, 1/4, 1/2
ALPHAS = (0.5, 0.75, 1.0)
DEFAULT = {"method": "max_rank", "M": 8, "J": 1, "alpha": 1.0}


def capacities(d: ModelDims) -> tuple[int, ...]:
    return tuple(d.n_layers * d.n_experts // f for f in CAPACITY_FRACTIONS)


def windows(d: ModelDims) -> tuple[int, ...]:
    return tuple(range(d.top_k, d.n_experts + 1, 2))


def lam_of(M: int, d: ModelDims) -> float:
    """cache_prior's lam for window slider position M: 0 at M = k, 1 at M = E."""
    return (M - d.top_k) / (d.n_experts - d.top_k)


def stock_route(d: ModelDims) -> RouteConfig:
    return RouteConfig("topk", k=d.top_k, J=0, M=d.top_k)


def tab_route(method: str, M: int, J: int, alpha: float, d: ModelDims) -> RouteConfig:
    """The RouteConfig behind one setting of the tab's controls (stock settings: topk)."""
    check_choice("method", method, TAB_METHODS)
    k = d.top_k
    M = check_int("M", M, k, d.n_experts)
    J = check_int("J", J, 0, k)
    if method == "cache_prior":
        cfg = RouteConfig("cache_prior", k=k, J=0, M=k, lam=lam_of(M, d))
    else:
        cfg = RouteConfig("max_rank", k=k, J=J, M=M, alpha=alpha)
    return stock_route(d) if cfg.stock else cfg


def grid_routes(d: ModelDims) -> tuple[RouteConfig, ...]:
    out: dict[str, RouteConfig] = {}
    for method in TAB_METHODS:
        for M in windows(d):
            for J in range(d.top_k + 1):
                for alpha in ALPHAS:
                    cfg = tab_route(method, M, J, alpha, d)
                    if not cfg.stock:
                        out.setdefault(cfg.label(), cfg)
    return tuple(out.values())


DIMS = shipped_dims()
CAPACITIES = capacities(DIMS)
WINDOWS = windows(DIMS)
