"""The invariant kernels: a row's bits do not depend on how many rows share its call.

Pinned against the row computed alone (the oracle: the same product with one row), for every
weight shape of the shipped model and the tiny one, every M from 1 to 40 and some larger ones,
with one and two threads: linear, bmm (both operand layouts), sigmoid, silu and RMSNorm; with
FAST kernels rows are allowed to differ (measured here only as a sanity check that the test can
tell). Weight caches (fused projections, transposed expert stacks) follow a weight's in-place
change and never mistake one tensor for another.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from core.model.config import TOY
from core.model.kernels import FAST, INVARIANT, exp_lanes_agree, fused, row_multiple, transposed
from tests.core.model.conftest import TINY

SIZES = [*range(1, 41), 63, 64, 65, 127, 129, 255, 300]


def _shapes(d):
    C, r, H = d.kda_inner, d.gate_rank, d.kda_heads
    yield d.d_model, 3 * C + 2 * r + H  # KDA's fused projection
    yield r, C
    yield C, d.d_model
    yield d.d_model, d.n_experts + 2 * d.shared_inner  # router + shared expert
    yield d.shared_inner, d.d_model
    yield d.d_model, d.mla_heads * d.mla_head_dim + d.kv_latent
    yield d.mla_heads * d.mla_head_dim, d.d_model
    yield d.d_model, d.vocab


@pytest.fixture(params=[1, 2], ids=["1 thread", "2 threads"])
def threads(request):
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)


@pytest.mark.parametrize("dims", [TOY, TINY], ids=["shipped", "tiny"])
def test_linear_rows_equal_the_row_alone(dims, threads):
    gen = torch.Generator().manual_seed(0)
    for K, N in _shapes(dims):
        w = torch.randn(N, K, generator=gen)
        x = torch.randn(max(SIZES), K, generator=gen)
        alone = torch.cat([INVARIANT.linear(x[i : i + 1], w) for i in range(max(SIZES))])
        for M in SIZES:
            assert torch.equal(INVARIANT.linear(x[:M], w), alone[:M]), (K, N, M)


@pytest.mark.parametrize("layout", ["row-major", "transposed"])
def test_bmm_rows_equal_the_row_alone(threads, layout):
    gen = torch.Generator().manual_seed(1)
    d = TOY
    for K, N, E in ((d.d_model, d.expert_inner, d.n_experts), (d.expert_inner, d.d_model, 3),
                    (d.kv_latent, 128, 16), (128, d.kv_latent, 5)):
        if layout == "row-major":
            w = torch.randn(E, K, N, generator=gen)
        else:
            w = torch.randn(E, N, K, generator=gen).transpose(1, 2)
        x = torch.randn(E, 70, K, generator=gen)
        alone = torch.stack([torch.cat([INVARIANT.bmm(x[e : e + 1, i : i + 1], w[e : e + 1])[0]
                                        for i in range(70)]) for e in range(E)])
        for M in (1, 2, 3, 5, 8, 13, 33, 70):
            for n_e in (1, E):
                got = INVARIANT.bmm(x[:n_e, :M], w[:n_e])
                assert torch.equal(got, alone[:n_e, :M]), (K, N, M, n_e)


def test_elementwise_rows_equal_the_row_alone():
    assert exp_lanes_agree()
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(300, 100, generator=gen) * 6  # 100: not a multiple of any vector width
    w, eps = torch.randn(100, generator=gen), torch.tensor(1e-6)
    for fn in (INVARIANT.sigmoid, INVARIANT.silu, lambda t: INVARIANT.rms(t, w, eps)):
        alone = torch.cat([fn(x[i : i + 1]) for i in range(300)])
        for M in (2, 3, 17, 300):
            assert torch.equal(fn(x[:M]), alone[:M])
    for fn in (INVARIANT.sigmoid, INVARIANT.silu):  # one long row: every lane position
        alone = torch.cat([fn(x[i : i + 1]) for i in range(300)])
        assert torch.equal(fn(x.reshape(-1)).view(300, 100), alone)


def test_fast_rows_can_differ_which_is_why_invariant_exists():
    """A sanity check that this test can tell: torch's own rsqrt and sigmoid give some element
    different bits inside a long call than alone, on this build."""
    x = torch.randn(20000, generator=torch.Generator().manual_seed(3)) * 6
    alone = torch.cat([FAST.sigmoid(x[i : i + 1]) for i in range(2000)])
    assert not torch.equal(FAST.sigmoid(x)[:2000], alone)


def test_row_multiple_is_one_of_the_calibrated_paddings():
    assert row_multiple("linear", 128, 384) in (1, 4, 8, 16, 32, 64)


def test_weight_caches_follow_their_weights():
    m = nn.Module()
    a, b = nn.Linear(4, 3, bias=False), nn.Linear(4, 2, bias=False)
    with torch.no_grad():
        first = fused(m, a, b)
        assert torch.equal(first, torch.cat([a.weight, b.weight]))
        assert fused(m, a, b) is first  # kept
        a.weight.add_(1.0)  # an in-place change (an optimizer step) bumps its version
        assert torch.equal(fused(m, a, b), torch.cat([a.weight, b.weight]))
        stacks = tuple(torch.randn(2, 3, 4) for _ in range(3))
        t1 = transposed(m, stacks)
        assert all(torch.equal(x, s.transpose(1, 2)) for x, s in zip(t1, stacks, strict=True))
        other = tuple(s.clone() + 1 for s in stacks)  # equal shapes, another tensor
        t2 = transposed(m, other)
        assert all(torch.equal(x, s.transpose(1, 2)) for x, s in zip(t2, other, strict=True))
    w = fused(m, a, b)  # under autograd: rebuilt, gradients reach the weights
    w.sum().backward()
    assert a.weight.grad is not None and b.weight.grad is not None
