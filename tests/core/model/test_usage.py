"""Expert usage and domain information against hand-built traces."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import ParamError
from core.model.trace import RoutingTrace
from core.model.usage import domain_information, domain_usage


def _trace(chosen: list[list[list[int]]], domains: list[int], n_experts: int = 4) -> RoutingTrace:
    c = np.array(chosen, np.int16)  # [N, L, k]
    z = np.zeros_like(c, dtype=np.float16)
    return RoutingTrace(tokens=np.zeros(len(domains), np.uint8),
                        domains=np.array(domains, np.uint8), top_ids=c, top_scores=z, chosen=c,
                        weights=z, n_experts=n_experts)


def test_usage_rows_are_shares_per_domain():
    t = _trace([[[0, 1]], [[0, 2]], [[3, 3]]], [0, 0, 1])
    u = domain_usage(t, 0, 2)
    np.testing.assert_array_equal(u, [[0.5, 0.25, 0.25, 0.0], [0.0, 0.0, 0.0, 1.0]])


def test_information_is_zero_when_routing_ignores_domain_and_one_bit_when_it_decides_it():
    same = _trace([[[0, 1]], [[0, 1]]], [0, 1])
    split = _trace([[[0, 0]], [[1, 1]]], [0, 1])
    assert domain_information(same, 2)[0] == pytest.approx(0.0, abs=1e-12)
    assert domain_information(split, 2)[0] == pytest.approx(1.0, abs=1e-12)


def test_unknown_domains_are_ignored_and_layer_is_checked():
    t = _trace([[[0, 1]], [[2, 3]]], [0, 255])
    np.testing.assert_array_equal(domain_usage(t, 0, 2)[1], 0.0)
    with pytest.raises(ParamError, match="layer"):
        domain_usage(t, 1, 2)
