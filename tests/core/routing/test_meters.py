"""Routing meters: the identities that make agree and KL restatements of the swap rate, and one
hand-worked row.

Pinned (reference section 5): agree and swap equal a recount from the raw scores and the chosen
ids (|chosen & true top-k| / k, the true top-k found by sorting each row in Python), and
|chosen & true top-k| counted by the meters equals k - swaps; with no swap every distribution
meter is exactly 0 whatever alpha is; a dropped expert costs about p * (27.6 + ln p) nats of
colibri's 1e-12-floored KL.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
import torch

from core.routing import METHODS, RouteConfig, route_meters, select_experts
from core.routing.meters import MeterSum, combine
from tests.core.routing.test_select import PERM, resident_mask, score_row


def _random(seed: int, n: int = 300, e: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(n, e, generator=g) * 2).softmax(-1), torch.rand(n, e, generator=g) < 0.4


def overlaps(scores: torch.Tensor, chosen: Sequence[Sequence[int]], k: int) -> list[int]:
    """Per row: how many chosen ids are among the row's k best scores, found by sorting the
    row in Python (NaN sorts lowest: a row with a NaN keeps its finite top-k)."""
    out = []
    for row, ids in zip(scores.tolist(), chosen, strict=True):
        order = sorted(range(len(row)), key=lambda e: -math.inf if math.isnan(row[e]) else row[e],
                       reverse=True)
        out.append(len(set(order[:k]) & set(ids)))
    return out


@pytest.mark.parametrize("method", METHODS)
def test_agree_and_swap_equal_a_recount(method: str) -> None:
    scores, res = _random(1)
    scores[3, 2] = math.nan  # a fallback row: stock top-k of its finite scores, k agreeing
    cfg = RouteConfig(method, k=4, J=1, M=12, P=0.8, alpha=0.5, lam=0.5)
    sel = select_experts(scores, res, cfg)
    m = route_meters(scores, sel)
    counted = torch.tensor(overlaps(scores, sel.ids.tolist(), 4), dtype=torch.float64)
    assert torch.equal(m.agree, counted / 4)
    assert torch.equal(m.swap, (4 - counted) / 4)
    assert torch.equal(m.overlap, 4 - sel.swaps)  # the meters' own count, apart from swaps
    assert counted[3] == 4


def test_no_swap_means_every_meter_is_zero() -> None:
    """Stock choice with alpha 0.25: the chosen set is the true set, alpha has nothing to scale."""
    scores, _ = _random(2)
    sel = select_experts(scores, torch.ones(16, dtype=torch.bool),
                         RouteConfig("max_rank", k=4, J=1, M=12, alpha=0.25))
    m = route_meters(scores, sel)
    assert int(sel.swaps.sum()) == 0
    for name in ("dropped_mass", "l1_shift", "kl", "kl_colibri"):
        assert float(getattr(m, name).abs().max()) < 1e-12, name


def test_hand_worked_row() -> None:
    """k=2, J=1, resident r5 (test_select's row): p = (0.6, 0.4) on r0, r1; q = (0.30, 0.07) /
    0.37 = (0.8108, 0.1892) on r0, r5. dropped = p(r1) = 0.4; L1 = |0.6 - 0.8108| + 0.4 +
    0.1892 = 0.8; KL = 0.6 ln(0.6 / 0.8108) + 0.4 ln(0.4 / floor)."""
    sel = select_experts(score_row(), resident_mask((5,)), RouteConfig("max_rank", k=2, J=1, M=8))
    assert sel.ids[0].tolist() == [PERM[0], PERM[5]]
    m = route_meters(score_row(), sel)
    q0 = 0.30 / 0.37
    assert m.dropped_mass.item() == pytest.approx(0.4, rel=1e-6)
    assert m.l1_shift.item() == pytest.approx(0.8, rel=1e-6)
    kept = 0.6 * math.log(0.6 / q0)
    assert m.kl.item() == pytest.approx(kept + 0.4 * math.log(0.4 / 1e-6), rel=1e-6)
    assert m.kl_colibri.item() == pytest.approx(kept + 0.4 * math.log(0.4 / 1e-12), rel=1e-6)
    # colibri's KL is dominated by the dropped expert's p (27.6 + ln p), whatever replaced it
    assert m.kl_colibri.item() - kept == pytest.approx(0.4 * (27.631 + math.log(0.4)), rel=1e-4)


def test_layer_sums_and_combine() -> None:
    """MeterSum over two calls equals one call over both; combine weights by valid rows."""
    scores, res = _random(3, n=40)
    cfg = RouteConfig("max_rank", k=4, J=1, M=12)
    whole = MeterSum()
    whole.add(route_meters(scores, select_experts(scores, res, cfg)), 4)
    parts = MeterSum()
    for a, b in ((0, 15), (15, 40)):
        parts.add(route_meters(scores[a:b], select_experts(scores[a:b], res[a:b], cfg)), 4)
    w, p = whole.summary(), parts.summary()
    assert (w.rows, w.slots, w.swaps) == (p.rows, p.slots, p.swaps) == (40, 160, w.swaps)
    counted = sum(overlaps(scores, select_experts(scores, res, cfg).ids.tolist(), 4))
    assert w.kl == pytest.approx(p.kl) and w.agree == pytest.approx(counted / 160, rel=1e-12)
    both = combine([w, p])
    assert (both.rows, both.swaps) == (80, 2 * w.swaps) and both.kl == pytest.approx(w.kl)
