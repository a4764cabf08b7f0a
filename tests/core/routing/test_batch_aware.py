"""Batch-aware routing (core.routing.batch_aware) on hand-worked rows, against select_experts row
by row with the preferred set recounted here, and on the tiny model: off by default, and a
request's routing then depends on its batch.

Hand-worked call, E = 8, k = 2, J = 1, M = 4; each row lists its experts by descending score:
  row 0: 5 2 7 0 ...   nothing chosen yet: sacred 5, backfill 2          -> {5, 2}  (stock)
  row 1: 0 3 2 6 ...   sacred 0; chosen {5, 2}: 2 sits at rank 2 < M     -> {0, 2}  (1 swap)
  row 2: 7 1 4 5 ...   sacred 7; chosen {5, 2, 0}: 5 at rank 3 < M       -> {7, 5}  (1 swap)
  row 3: 6 1 3 4 ...   sacred 6; nothing chosen in ranks 1..3: backfill 1 -> {6, 1}  (stock)
Union 6 experts {0, 1, 2, 5, 6, 7} against stock's 7 {0, 1, 2, 3, 5, 6, 7}.
"""

from __future__ import annotations

import pytest
import torch

from core.errors import ParamError
from core.routing import RouteConfig, select_experts
from core.routing.batch_aware import BatchAwarePolicy, select_batch_aware

CFG = RouteConfig("max_rank", k=2, J=1, M=4)
ORDERS = ((5, 2, 7, 0, 1, 3, 4, 6), (0, 3, 2, 6, 1, 4, 5, 7), (7, 1, 4, 5, 0, 2, 3, 6),
          (6, 1, 3, 4, 0, 2, 5, 7))
VALS = (0.30, 0.20, 0.15, 0.12, 0.10, 0.07, 0.04, 0.02)  # rank -> score


def scores(orders=ORDERS) -> torch.Tensor:
    s = torch.zeros(len(orders), 8)
    for n, order in enumerate(orders):
        for r, e in enumerate(order):
            s[n, e] = VALS[r]
    return s  # [N, 8]


def test_hand_worked_call() -> None:
    sel = select_batch_aware(scores(), CFG)
    assert [sorted(r) for r in sel.ids.tolist()] == [[2, 5], [0, 2], [5, 7], [1, 6]]
    assert sel.swaps.tolist() == [0, 1, 1, 0]
    assert len(set(sel.ids.flatten().tolist())) == 6
    stock = scores().topk(2).indices
    assert len(set(stock.flatten().tolist())) == 7


def test_each_row_is_select_experts_with_the_rows_before_it_preferred() -> None:
    g = torch.Generator().manual_seed(3)
    s = torch.rand(12, 16, generator=g).softmax(-1)  # [12, 16]
    cfg = RouteConfig("max_rank", k=2, J=1, M=6)
    sel = select_batch_aware(s, cfg)
    for n in range(12):
        before = {int(e) for e in sel.ids[:n].flatten()}
        mask = torch.tensor([e in before for e in range(16)])
        alone = select_experts(s[n : n + 1], mask, cfg)
        assert torch.equal(alone.ids[0], sel.ids[n]) and torch.equal(alone.weights[0],
                                                                      sel.weights[n])


def test_first_row_and_sacred_k_are_stock() -> None:
    s = scores()
    stock = select_experts(s, torch.zeros(8, dtype=torch.bool), RouteConfig("topk", k=2))
    assert torch.equal(select_batch_aware(s[:1], CFG).ids, stock.ids[:1])
    assert torch.equal(select_batch_aware(s, RouteConfig("max_rank", k=2, J=2, M=4)).ids,
                       stock.ids)


def test_union_never_exceeds_stock() -> None:
    g = torch.Generator().manual_seed(7)
    for n in (1, 3, 9, 30):
        s = torch.rand(n, 16, generator=g).softmax(-1)
        ours = set(select_batch_aware(s, RouteConfig("max_rank", k=2, J=1, M=8)).ids
                   .flatten().tolist())
        assert len(ours) <= len(set(s.topk(2).indices.flatten().tolist()))


def test_refuses_other_methods() -> None:
    with pytest.raises(ParamError, match="max_rank"):
        select_batch_aware(scores(), RouteConfig("topk", k=2))
    with pytest.raises(ParamError, match="max_rank"):
        BatchAwarePolicy(RouteConfig("cache_prior", k=2, lam=1.0))


def test_policy_in_the_model_makes_a_row_depend_on_its_batch(tiny) -> None:
    """Through HybridLM.step: alone, a sequence's routing is stock; beside another, a later
    row of the batch takes experts the earlier row chose (swaps > 0), so its routing differs
    from its solo routing."""
    from core.model.providers import AllResident

    m = tiny
    d = m.dims
    policy = BatchAwarePolicy(RouteConfig("max_rank", k=d.top_k, J=1, M=d.n_experts))
    stacks = [(b.moe.w1, b.moe.w2, b.moe.w3) for b in m.blocks]
    provider = AllResident(stacks, policy)
    toks = torch.tensor([3, 200])
    with torch.no_grad():
        solo = m.step(toks[1:], m.new_state(1), m.resident()).routing
        both = m.step(toks, m.new_state(2), provider).routing
        alone = m.step(toks[1:], m.new_state(1), provider).routing
    assert all(torch.equal(a.ids, s.ids) for a, s in zip(alone, solo, strict=True))
    assert policy.swaps > 0
    assert any(not torch.equal(b.ids[1], s.ids[0]) for b, s in zip(both, solo, strict=True))
