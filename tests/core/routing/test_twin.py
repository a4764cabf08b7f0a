"""The vectorised select_experts equals its per-row loop twin, naive_select_experts.

Scores are drawn on a coarse grid (multiples of 1/16, so ties are common and every sum is
exact) with NaN and inf sprinkled in, residency per snapshot or per row, and every knob in
range; a second test uses continuous softmax scores. ids, kinds, swaps, windows and the
fallback flags must be equal; weights equal to float32 rounding (a row sum may be reduced in a
different order).
"""

from __future__ import annotations

import math
from dataclasses import fields

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from core.routing import METHODS, RouteConfig, naive_select_experts, select_experts
from core.routing.select import ROW_PATH


def _assert_same(a, b) -> None:
    for name in ("ids", "kind", "swaps", "window", "fallback"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    ok = ~a.fallback
    assert torch.allclose(a.weights[ok], b.weights[ok], rtol=1e-6, atol=1e-7)
    assert torch.equal(a.weights[~ok], b.weights[~ok])


@st.composite
def cases(draw):
    E = draw(st.integers(2, 12))
    N = draw(st.integers(0, 6))
    k = draw(st.integers(1, E))
    cfg = RouteConfig(
        draw(st.sampled_from(METHODS)), k=k, J=draw(st.integers(0, k)),
        M=draw(st.integers(k, E)), P=draw(st.sampled_from([0.05, 0.3, 0.5, 0.75, 0.9, 0.99])),
        alpha=draw(st.sampled_from([1.0, 0.5, 0.25])),
        lam=draw(st.sampled_from([0.0, 0.1, 0.5, 1.0, 2.0, 100.0])))
    cell = st.one_of(st.integers(0, 16).map(lambda i: i / 16),
                     st.sampled_from([math.nan, math.inf, -math.inf]))
    grid = draw(st.lists(st.lists(st.integers(0, 16).map(lambda i: i / 16), min_size=E,
                                  max_size=E), min_size=N, max_size=N))
    scores = torch.tensor(grid, dtype=torch.float32).reshape(N, E)
    if N and draw(st.booleans()):
        r, c = draw(st.integers(0, N - 1)), draw(st.integers(0, E - 1))
        scores[r, c] = draw(cell)
    shape = (E,) if draw(st.booleans()) else (N, E)
    flags = draw(st.lists(st.booleans(), min_size=math.prod(shape), max_size=math.prod(shape)))
    return scores, torch.tensor(flags, dtype=torch.bool).reshape(shape), cfg


@settings(max_examples=400, deadline=None)
@given(cases())
def test_fast_equals_naive_on_grid_scores(case) -> None:
    scores, resident, cfg = case
    _assert_same(select_experts(scores, resident, cfg),
                 naive_select_experts(scores, resident, cfg))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(METHODS))
def test_fast_equals_naive_on_softmax_scores(seed: int, method: str) -> None:
    g = torch.Generator().manual_seed(seed)
    scores = (torch.randn(40, 16, generator=g) * 2).softmax(-1)  # [40, 16]
    resident = torch.rand(40, 16, generator=g) < 0.3
    cfg = RouteConfig(method, k=4, J=1, M=10, P=0.8, alpha=0.5, lam=0.4)
    _assert_same(select_experts(scores, resident, cfg),
                 naive_select_experts(scores, resident, cfg))


@settings(max_examples=300, deadline=None)
@given(cases())
def test_row_path_equals_vectorised_path(case) -> None:
    """Rows are independent: a batch (past ROW_PATH rows: the tensor path) equals its rows
    selected one call each (the row-by-row path), bit for bit, weights included."""
    scores, resident, cfg = case
    N, E = scores.shape
    reps = ROW_PATH + 1
    big = scores.repeat(reps, 1)  # [reps * N, E]
    res = resident.repeat(reps, 1) if resident.dim() == 2 else resident
    whole = select_experts(big, res, cfg)
    for i in range(N):
        one = select_experts(scores[i : i + 1], resident[i : i + 1] if resident.dim() == 2
                             else resident, cfg)
        for f in fields(one):
            assert torch.equal(getattr(whole, f.name)[i : i + 1], getattr(one, f.name)), f.name


def test_stock_configs_equal_topk_bit_for_bit() -> None:
    """J = k, M = k and lam = 0 give the topk method's ids and weights exactly, and nothing
    resident or everything resident gives the stock ids whatever J and M are."""
    g = torch.Generator().manual_seed(0)
    scores = (torch.randn(500, 16, generator=g) * 2).softmax(-1)
    resident = torch.rand(500, 16, generator=g) < 0.4
    stock = select_experts(scores, resident, RouteConfig("topk", k=4))
    for cfg in (RouteConfig("max_rank", k=4, J=4, M=12), RouteConfig("max_rank", k=4, J=1, M=4),
                RouteConfig("cum_prob", k=4, J=4), RouteConfig("cache_prior", k=4, lam=0.0)):
        sel = select_experts(scores, resident, cfg)
        assert torch.equal(sel.ids, stock.ids) and torch.equal(sel.weights, stock.weights), cfg
    for res in (torch.zeros(16, dtype=torch.bool), torch.ones(16, dtype=torch.bool)):
        for cfg in (RouteConfig("max_rank", k=4, J=1, M=12, alpha=0.5),
                    RouteConfig("cum_prob", k=4, J=0, P=0.9, alpha=0.5)):
            sel = select_experts(scores, res, cfg)
            assert torch.equal(sel.ids, stock.ids) and torch.equal(sel.weights, stock.weights)
            assert int(sel.swaps.sum()) == 0
    top = scores.topk(4, dim=-1)  # the MoE's stock path
    assert torch.equal(stock.ids, top.indices)
    assert torch.equal(stock.weights, top.values / top.values.sum(-1, keepdim=True))
