"""Routing information against hand-worked traces: the ceiling H(domain), one pick vs the
whole top-k set, domain runs, and the shuffle baseline (a null that must not see a signal)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.errors import ParamError
from core.model.trace import RoutingTrace
from core.model.usage import (
    domain_entropy,
    domain_information,
    domain_runs,
    entropy,
    set_information,
    specialisation,
)


def _trace(chosen: list[list[list[int]]], domains: list[int], n_experts: int = 4) -> RoutingTrace:
    c = np.array(chosen, np.int16)  # [N, L, k]
    z = np.zeros_like(c, dtype=np.float16)
    return RoutingTrace(tokens=np.zeros(len(domains), np.uint8),
                        domains=np.array(domains, np.uint8), top_ids=c, top_scores=z, chosen=c,
                        weights=z, n_experts=n_experts)


def test_entropy_of_an_uneven_mix_is_below_log2_of_the_domains() -> None:
    """3:1 mix: H = -(3/4 log2 3/4 + 1/4 log2 1/4) = 0.811 bits, not log2(2) = 1."""
    t = _trace([[[0, 1]]] * 4, [0, 0, 0, 1])
    want = -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25))
    assert domain_entropy(t, 2) == pytest.approx(want, abs=1e-12)
    assert entropy(np.array([5, 5, 5])) == 0.0


def test_the_set_can_name_the_domain_when_no_single_pick_does() -> None:
    """Three equal domains route to {0,1}, {0,2}, {1,2}: the set says log2 3 bits; each pick
    leaves two domains equally likely, so one pick says log2 3 - 1 bits."""
    sets = [[0, 1], [2, 0], [1, 2]]  # order inside a set must not matter
    t = _trace([[sets[d]] for d in (0, 1, 2) * 4], [0, 1, 2] * 4)
    assert set_information(t, 3)[0] == pytest.approx(math.log2(3), abs=1e-12)
    assert domain_information(t, 3)[0] == pytest.approx(math.log2(3) - 1, abs=1e-12)
    assert set_information(t, 3)[0] == pytest.approx(domain_entropy(t, 3), abs=1e-12)


def test_domain_runs_counts_maximal_stretches() -> None:
    assert domain_runs(_trace([[[0, 1]]] * 5, [0, 0, 1, 1, 0])) == 3
    assert domain_runs(_trace([[[0, 1]]], [2])) == 1
    none, no_picks = np.zeros((0,), np.uint8), np.zeros((0, 1, 2), np.int16)
    empty = RoutingTrace(tokens=none, domains=none, top_ids=no_picks, top_scores=no_picks,
                         chosen=no_picks, weights=no_picks, n_experts=4)
    assert domain_runs(empty) == 0


def test_shuffle_baseline_removes_the_signal_and_is_seeded() -> None:
    """A perfect split scores H(domain); with labels shuffled it scores far less. Routing
    drawn independently of the domain scores about its own shuffle baseline (the bias)."""
    rng = np.random.default_rng(1)
    dom = rng.integers(0, 2, 400)
    split = _trace([[[2 * d, 2 * d + 1]] for d in dom], dom.tolist())
    s = specialisation(split, 2, draws=10, seed=3)
    assert s.top_set[0] == pytest.approx(s.entropy, abs=1e-12)
    assert s.top_set_shuffled[0] < 0.05 * s.entropy
    noise = _trace([[list(rng.choice(4, 2, replace=False))] for _ in dom], dom.tolist())
    n = specialisation(noise, 2, draws=50, seed=3)
    assert abs(n.top_set[0] - n.top_set_shuffled[0]) < 0.02
    again = specialisation(noise, 2, draws=50, seed=3)
    assert np.array_equal(n.top_set_shuffled, again.top_set_shuffled)
    assert n.runs == domain_runs(noise) and n.tokens == 400


def test_unknown_domains_are_left_out_and_draws_checked() -> None:
    t = _trace([[[0, 1]], [[2, 3]], [[0, 1]]], [0, 255, 1])
    assert specialisation(t, 2, draws=2).tokens == 2
    with pytest.raises(ParamError, match="draws"):
        specialisation(t, 2, draws=0)
