"""select_experts on hand-worked rows: every case below is worked out in its comment.

One row of E = 8 experts. Expert ids are not ranks: rank r is expert PERM[r], so a test that
confused the two would fail. Scores by rank: 0.30 0.20 0.15 0.12 0.10 0.07 0.04 0.02 (sum 1).
`ranks` in a case lists the resident ranks; ids and weights are checked exactly (weights to
float32 rounding), kinds by name, swaps as a count.
"""

from __future__ import annotations

import math

import pytest
import torch

from core.routing import KINDS, RouteConfig, naive_select_experts, select_experts

PERM = (5, 2, 7, 0, 3, 6, 1, 4)  # rank -> expert id
VALS = (0.30, 0.20, 0.15, 0.12, 0.10, 0.07, 0.04, 0.02)  # rank -> score


def score_row() -> torch.Tensor:
    s = torch.zeros(1, 8)
    for r, e in enumerate(PERM):
        s[0, e] = VALS[r]
    return s  # [1, 8]


def resident_mask(ranks: tuple[int, ...]) -> torch.Tensor:
    m = torch.zeros(8, dtype=torch.bool)
    for r in ranks:
        m[PERM[r]] = True
    return m  # [8]


S, R, B, T = "sacred", "resident fill", "backfill", "stock"

# (id, cfg, resident ranks, chosen ranks, kinds, swaps)
CASES = [
    # colibri's worked example (reference section 3): k=4, J=1, M=8, resident r1 r5 r7.
    # Sacred r0; fill r1, r5, r7 in rank order; k=4 slots full; r5 and r7 are outside the
    # true top-4 (r0..r3): 2 swaps, agree 50%.
    ("colibri-example", RouteConfig("max_rank", k=4, J=1, M=8), (1, 5, 7), (0, 1, 5, 7),
     (S, R, R, R), 2),
    # k=2, J=1, M=8, only r5 resident: sacred r0, then the resident r5 beats the cold r1.
    ("resident-r5-before-cold-r1", RouteConfig("max_rank", k=2, J=1, M=8), (5,), (0, 5),
     (S, R), 1),
    # Nothing resident: sacred r0, backfill r1 r2 r3 in true-rank order = the stock top-4.
    ("nothing-resident", RouteConfig("max_rank", k=4, J=1, M=8), (), (0, 1, 2, 3),
     (S, B, B, B), 0),
    # Everything resident: the fill scans r1, r2, r3 first and fills up = stock.
    ("everything-resident", RouteConfig("max_rank", k=4, J=1, M=8), tuple(range(8)),
     (0, 1, 2, 3), (S, R, R, R), 0),
    # J = k = 2: both slots sacred, the resident r6 and r7 never get a look: stock.
    ("J-equals-k", RouteConfig("max_rank", k=2, J=2, M=8), (6, 7), (0, 1), (S, S), 0),
    # M = k = 2: the window is r0 r1 only, so the resident r4 is out of reach: stock.
    ("M-equals-k", RouteConfig("max_rank", k=2, J=1, M=2), (4,), (0, 1), (S, B), 0),
    # J=0, M=4, resident r2: fill r2 first, backfill r0; output in rank order (r0, r2).
    ("J0-output-in-rank-order", RouteConfig("max_rank", k=2, J=0, M=4), (2,), (0, 2), (B, R), 1),
    # cum_prob, P=0.75: cumulative mass 0.30 0.50 0.65 0.77 reaches 0.75 at r3: window 4.
    # Resident r3 and r5: r3 is in the window and fills; r5 (which max_rank M=8 would take
    # second if r3 were cold) is not.
    ("cum-prob-window-4", RouteConfig("cum_prob", k=2, J=1, P=0.75), (3, 5), (0, 3), (S, R), 1),
    # cum_prob, P=0.75, only r5 resident: outside the window of 4, so backfill r1: stock.
    ("cum-prob-r5-outside", RouteConfig("cum_prob", k=2, J=1, P=0.75), (5,), (0, 1), (S, B), 0),
    # cum_prob, P=0.2: r0 alone reaches 0.2, window 1, floored at k=2: r0 r1, stock.
    ("cum-prob-floor-k", RouteConfig("cum_prob", k=2, J=1, P=0.2), (7,), (0, 1), (S, B), 0),
    # cache_prior, lam=0: z' = log s, the stock order.
    ("prior-lam0", RouteConfig("cache_prior", k=2, lam=0.0), (3, 4), (0, 1), (T, T), 0),
    # cache_prior, lam=0.3: range = ln 0.30 - ln 0.02 = 2.708, bonus 0.3 * 2.708 = 0.812.
    # Resident r2: z' = ln 0.15 + 0.812 = -1.085 > ln 0.30 = -1.204 > ln 0.20 = -1.609, so
    # the top-2 of z' are r2 and r0; output in rank order.
    ("prior-lam0.3", RouteConfig("cache_prior", k=2, lam=0.3), (2,), (0, 2), (T, R), 1),
    # cache_prior, lam=1000: every resident outranks every cold expert; the best two
    # residents of r2 r5 r6 r7 are r2 and r5.
    ("prior-huge-lam", RouteConfig("cache_prior", k=2, lam=1000.0), (2, 5, 6, 7), (2, 5),
     (R, R), 2),
    # topk ignores residency altogether.
    ("topk", RouteConfig("topk", k=3), (5, 6, 7), (0, 1, 2), (T, T, T), 0),
]


@pytest.mark.parametrize(("cfg", "res", "ranks", "kinds", "swaps"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("fn", [select_experts, naive_select_experts], ids=["fast", "naive"])
def test_hand_worked(fn, cfg, res, ranks, kinds, swaps) -> None:
    """ids, weights (scores renormalised over the chosen set), kinds and swaps as worked."""
    sel = fn(score_row(), resident_mask(res), cfg)
    assert sel.ids[0].tolist() == [PERM[r] for r in ranks]
    want = torch.tensor([VALS[r] for r in ranks])
    assert torch.allclose(sel.weights[0], want / want.sum(), rtol=1e-6, atol=0)
    assert [KINDS[c] for c in sel.kind[0].tolist()] == list(kinds)
    assert sel.swaps.tolist() == [swaps]
    assert not bool(sel.fallback[0])


def test_alpha_lowers_the_substitutes_share() -> None:
    """Resident r5 for the cold r1 (k=2, J=1): alpha=1 gives it 0.07 / 0.37 = 18.9%; alpha=0.5
    gives 0.035 / 0.335 = 10.4%, and the mass goes back to the sacred r0."""
    full = select_experts(score_row(), resident_mask((5,)), RouteConfig("max_rank", k=2, J=1, M=8))
    half = select_experts(score_row(), resident_mask((5,)),
                          RouteConfig("max_rank", k=2, J=1, M=8, alpha=0.5))
    assert torch.equal(full.ids, half.ids)
    assert half.weights[0, 1].item() == pytest.approx(0.035 / 0.335, rel=1e-6)
    assert full.weights[0, 1].item() == pytest.approx(0.07 / 0.37, rel=1e-6)
    assert half.weights[0, 0] > full.weights[0, 0]


def test_window_is_reported() -> None:
    """window: M for max_rank, the mass window for cum_prob, k for topk, E for cache_prior."""
    s, r = score_row(), resident_mask(())
    got = [select_experts(s, r, cfg).window.item() for cfg in (
        RouteConfig("max_rank", k=2, M=6), RouteConfig("cum_prob", k=2, P=0.75),
        RouteConfig("topk", k=2), RouteConfig("cache_prior", k=2, lam=0.5))]
    assert got == [6, 4, 2, 8]


class TestNonFinite:
    def test_nan_row_falls_back_to_stock_of_the_rest(self) -> None:
        """r0 (expert 5) is NaN: the row ranks the rest, r1 r2 = experts 2 and 7, weights 1/2."""
        s = score_row()
        s[0, PERM[0]] = math.nan
        for fn in (select_experts, naive_select_experts):
            sel = fn(s, resident_mask((5, 6)), RouteConfig("max_rank", k=2, J=1, M=8))
            assert sel.ids[0].tolist() == [2, 7] and sel.weights[0].tolist() == [0.5, 0.5]
            assert sel.fallback.tolist() == [True] and sel.swaps.tolist() == [0]
            assert [KINDS[c] for c in sel.kind[0].tolist()] == [T, T]

    def test_all_nan_and_inf_rows_take_the_lowest_ids_once_each(self) -> None:
        """All NaN: every score reads -inf, ties to the lower id: 0, 1, 2. An inf row too."""
        s = torch.full((2, 8), math.nan)
        s[1] = torch.tensor([math.inf, 0.1, -math.inf, 0.3, math.nan, 0.2, 0.0, 0.4])
        for fn in (select_experts, naive_select_experts):
            sel = fn(s, torch.ones(8, dtype=torch.bool), RouteConfig("cache_prior", k=3, lam=2))
            assert sel.ids.tolist() == [[0, 1, 2], [7, 3, 5]]
            assert sel.fallback.tolist() == [True, True]

    def test_good_rows_beside_a_bad_one_are_unaffected(self) -> None:
        s = torch.cat([score_row(), torch.full((1, 8), math.nan), score_row()])  # [3, 8]
        cfg = RouteConfig("max_rank", k=2, J=1, M=8)
        sel = select_experts(s, resident_mask((5,)), cfg)
        one = select_experts(score_row(), resident_mask((5,)), cfg)
        assert torch.equal(sel.ids[0], one.ids[0]) and torch.equal(sel.ids[2], one.ids[0])
        assert sel.fallback.tolist() == [False, True, False]


def test_ties_go_to_the_lower_id() -> None:
    """Eight equal scores: the true top-3 are experts 0, 1, 2; max_rank with expert 6 resident
    (J=1, M=8) takes 0, then the resident 6, then backfills 1."""
    s = torch.full((1, 8), 0.125)
    assert select_experts(s, torch.zeros(8, dtype=torch.bool),
                          RouteConfig("topk", k=3)).ids.tolist() == [[0, 1, 2]]
    res = torch.zeros(8, dtype=torch.bool)
    res[6] = True
    sel = select_experts(s, res, RouteConfig("max_rank", k=3, J=1, M=8))
    assert sel.ids.tolist() == [[0, 1, 6]] and sel.swaps.tolist() == [1]


def test_per_row_residency() -> None:
    """resident [N, E]: each row reads its own snapshot."""
    s = torch.cat([score_row(), score_row()])
    res = torch.stack([resident_mask((5,)), resident_mask(())])
    sel = select_experts(s, res, RouteConfig("max_rank", k=2, J=1, M=8))
    assert sel.ids.tolist() == [[PERM[0], PERM[5]], [PERM[0], PERM[1]]]
