"""RouteConfig and select_experts refuse bad knobs by name and range; nothing is clamped.

colibri clamps J to [0, Ksel], maps alpha <= 0 or > 1 to 1 and ignores P outside (0, 1)
silently (reference section 3); here each of those raises ParamError naming the knob.
"""

from __future__ import annotations

import math

import pytest
import torch

from core.errors import ParamError
from core.routing import RouteConfig, naive_select_experts, select_experts


@pytest.mark.parametrize(("kw", "match"), [
    ({"method": "lru"}, "method must be one of"),
    ({"k": 0}, r"k must be in \[1, inf\)"),
    ({"J": -1}, r"J must be in \[0, 2\]"),
    ({"J": 3}, r"J must be in \[0, 2\]"),
    ({"M": 1}, r"M must be an integer in \[k, E\] = \[2, E\]"),
    ({"M": 4.0}, r"M must be an integer in \[k, E\]"),
    ({"P": 0.0}, r"P must be in \(0, 1\)"),
    ({"P": 1.0}, r"P must be in \(0, 1\)"),
    ({"P": math.nan}, "P must be a finite number"),
    ({"alpha": 0.0}, r"alpha must be in \(0, 1\]"),
    ({"alpha": 1.5}, r"alpha must be in \(0, 1\]"),
    ({"lam": -0.1}, r"lam must be in \[0, inf\)"),
    ({"lam": math.inf}, "lam must be a finite number"),
], ids=lambda x: str(x))
def test_bad_knobs_raise(kw: dict, match: str) -> None:
    with pytest.raises(ParamError, match=match):
        RouteConfig(**({"k": 2} | kw))


def test_edges_are_valid() -> None:
    """J = k, J = 0, M = k, alpha = 1, lam = 0 are all legal (and all give stock)."""
    for cfg in (RouteConfig("max_rank", k=2, J=2), RouteConfig("max_rank", k=2, J=0, M=2),
                RouteConfig("cache_prior", k=2, lam=0.0), RouteConfig(alpha=1.0)):
        assert cfg.stock


@pytest.mark.parametrize("fn", [select_experts, naive_select_experts])
def test_knobs_checked_against_E(fn) -> None:
    s, res = torch.rand(3, 6), torch.zeros(6, dtype=torch.bool)
    with pytest.raises(ParamError, match=r"k must be in \[1, E\] = \[1, 6\], got 7"):
        fn(s, res, RouteConfig("topk", k=7, J=0, M=7))
    with pytest.raises(ParamError, match=r"M must be in \[k, E\] = \[2, 6\], got 8"):
        fn(s, res, RouteConfig("max_rank", k=2, M=8))


@pytest.mark.parametrize("fn", [select_experts, naive_select_experts])
def test_bad_tensors(fn) -> None:
    cfg = RouteConfig("topk", k=2)
    with pytest.raises(ParamError, match="float32 tensor"):
        fn(torch.rand(3, 6).double(), torch.zeros(6, dtype=torch.bool), cfg)
    with pytest.raises(ParamError, match="resident must be a bool tensor"):
        fn(torch.rand(3, 6), torch.zeros(5, dtype=torch.bool), cfg)
    with pytest.raises(ParamError, match="resident must be a bool tensor"):
        fn(torch.rand(3, 6), torch.zeros(6), cfg)
    with pytest.raises(ParamError, match="cfg must be a RouteConfig"):
        fn(torch.rand(3, 6), torch.zeros(6, dtype=torch.bool), {"method": "topk"})
