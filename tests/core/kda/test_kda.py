"""KDA core: gate formulas, the step's order, chunked == recurrent, causality, input validation.

Pinned: the order decay -> predict -> write -> read (the Model-Viz write-up corrects before the
decay and uses g as the decay factor; both give different outputs); kda_chunked equals the
float64 recurrence to 1e-10 for ragged T, several chunk sizes, with and without an initial state,
on both of its paths (anchored sub-chunks for |g| <= 5, halving for stronger gates); fp32 with
the K3 lower bound -5 and chunk 64 stays finite (the naive exp(G_i) exp(-G_j) split overflows);
outputs before position p never depend on inputs at or after p, bit for bit.
"""

from __future__ import annotations

import math

import pytest
import torch

from core.errors import ParamError
from core.kda import kda_chunked, kda_gate, kda_recurrent, kda_step, segment_transition
from core.kda.chunked import sub_chunk_size
from core.kda.recurrent import kda_step_products
from core.speculative.drafts import DraftProjections
from tests.tolerance import EXACT, FP32_ORACLE, FP64_CHUNKED, Tolerance, assert_close

HAND = Tolerance("float64 vs hand-computed closed form", max_abs=1e-14)


def _inputs(B=2, T=9, H=3, K=8, V=5, dtype=torch.float64, seed=0, lb=-5.0):
    """(q, k, v, g, beta) in fla layout with normalised q, k and g uniform in [lb, 0]."""
    d = DraftProjections.from_random(B, T, H, K, V, dtype, seed=seed, gate_lower_bound=lb)
    return d.q, d.k, d.v, d.g, d.beta


def _state(B=2, H=3, K=8, V=5, dtype=torch.float64, seed=1):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(B, H, K, V, generator=gen, dtype=torch.float64).to(dtype)


class TestGate:
    """kda_gate against the two formulas of reference §2, computed by hand with math."""

    A_LOG = torch.tensor([0.0, math.log(2.0)], dtype=torch.float64)
    DT_BIAS = torch.tensor([0.0, 1.0, 0.0, -1.0], dtype=torch.float64)  # [H*K] -> [[0, 1], [0, -1]]
    Z = torch.tensor([[[[1.0, -1.0], [2.0, 1.0]]]], dtype=torch.float64)  # [1, 1, H=2, K=2]

    def test_softplus(self):
        """g = -exp(A_log[h]) softplus(z + dt_bias): z + dt = [[1, 0], [2, 0]]."""
        sp = lambda x: math.log1p(math.exp(x))  # noqa: E731
        want = torch.tensor([[[[-sp(1), -sp(0)], [-2 * sp(2), -2 * sp(0)]]]], dtype=torch.float64)
        got = kda_gate(self.Z, self.A_LOG, self.DT_BIAS, form="softplus")
        assert_close(want, got, HAND, "softplus gate")

    def test_lowerbound(self):
        """g = lb sigmoid(exp(A_log[h]) (z + dt_bias)), lb = -5: in (-5, 0)."""
        sig = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
        want = torch.tensor([[[[-5 * sig(1), -2.5], [-5 * sig(4), -2.5]]]], dtype=torch.float64)
        got = kda_gate(self.Z, self.A_LOG, self.DT_BIAS, form="lowerbound", lower_bound=-5.0)
        assert_close(want, got, HAND, "lower-bound gate")
        assert bool((got > -5).all() and (got < 0).all())

    def test_no_bias_and_bad_form(self):
        """dt_bias=None means zero; an unknown form names `form`."""
        got = kda_gate(torch.zeros(1, 1, 2, 2), torch.zeros(2), None, form="lowerbound")
        assert_close(torch.full((1, 1, 2, 2), -2.5), got, EXACT, "sigmoid(0) lb")
        with pytest.raises(ParamError, match="form"):
            kda_gate(self.Z, self.A_LOG, self.DT_BIAS, form="exp")
        with pytest.raises(ParamError, match="dt_bias"):
            kda_gate(self.Z, self.A_LOG, self.DT_BIAS[:3])


def _seed_order_step(q, k, v, g, beta, S, scale):
    """The write-up's flawed order: correct with the undecayed state, then decay."""
    delta = beta[..., None] * (v - (S * k[..., None]).sum(-2))
    S = S * g.exp()[..., None] + k[..., None] * delta[..., None, :]
    return (S * (scale * q)[..., None]).sum(-2), S


def _g_as_alpha_step(q, k, v, g, beta, S, scale):
    """The right order, but the log-space gate g used as the decay factor."""
    S = S * g[..., None]
    S = S + k[..., None] * (beta[..., None] * (v - (S * k[..., None]).sum(-2)))[..., None, :]
    return (S * (scale * q)[..., None]).sum(-2), S


class TestStep:
    """One token by hand, and the two known wrong orders that must differ from it."""

    S = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]], dtype=torch.float64)  # [B=1, H=1, K=2, V=2]
    ARGS = (
        torch.tensor([[[1.0, 1.0]]], dtype=torch.float64),  # q
        torch.tensor([[[1.0, 0.0]]], dtype=torch.float64),  # k
        torch.tensor([[[10.0, 20.0]]], dtype=torch.float64),  # v
        torch.tensor([[[math.log(0.5), 0.0]]], dtype=torch.float64),  # g: decay row 0 by 1/2
        torch.tensor([[0.5]], dtype=torch.float64),  # beta
    )

    def test_hand_computed(self):
        """Decay [[.5, 1], [3, 4]]; u = [.5, 1]; write .5([10, 20] - u) to row 0; read q."""
        before = self.S.clone()
        o, S = kda_step(*self.ARGS, self.S, scale=1.0)
        assert_close(torch.tensor([[[[5.25, 10.5], [3.0, 4.0]]]]), S, EXACT, "state")
        assert_close(torch.tensor([[[8.25, 14.5]]]), o, EXACT, "output")
        assert_close(before, self.S, EXACT, "input state untouched")

    @pytest.mark.parametrize(
        "wrong", [_seed_order_step, _g_as_alpha_step], ids=["correct-then-decay", "g-as-alpha"]
    )
    def test_wrong_orders_differ(self, wrong):
        """Both flaws change the output on the crafted token and on random ones."""
        o, _ = kda_step(*self.ARGS, self.S, scale=1.0)
        o_bad, _ = wrong(*self.ARGS, self.S, 1.0)
        assert (o - o_bad).abs().max() > 0.1
        q, k, v, g, beta = (x[:, 0] for x in _inputs(T=1))
        S = _state()
        o, _ = kda_step(q, k, v, g, beta, S)
        o_bad, _ = wrong(q, k, v, g, beta, S, 8**-0.5)
        assert (o - o_bad).abs().max() > 1e-3

    def test_matrix_form(self):
        """S_t = (I - beta k k^T) Diag(exp g) S + beta k v^T (reference §2)."""
        q, k, v, g, beta = (x[:, 0] for x in _inputs(T=1))
        S = _state()
        _, got = kda_step(q, k, v, g, beta, S)
        eye = torch.eye(8, dtype=torch.float64)
        bk = beta[..., None, None] * k[..., :, None]  # [B, H, K, 1]
        Am = (eye - bk * k[..., None, :]) * g.exp()[..., None, :]  # [B, H, K, K]
        want = Am @ S + bk * v[..., None, :]
        assert_close(want, got, FP64_CHUNKED, "matrix form")

    @pytest.mark.parametrize("B", [1, 16])
    def test_batched_products_form(self, B):
        """The FAST kernels' step (BLAS products) against kda_step, float64, non-contiguous
        state as the batched page reads give it; the hand-computed token too."""
        q, k, v, g, beta = (x[:, 0] for x in _inputs(B=B, T=1, seed=B))
        S = torch.randn(B, 2, 3, 8, 5, dtype=torch.float64)[:, 1]  # [B, H, K, V], a slice
        for want, got in zip(kda_step(q, k, v, g, beta, S), kda_step_products(q, k, v, g, beta, S),
                             strict=True):
            assert_close(want, got, FP64_CHUNKED, "batched products vs kda_step")
        o, S1 = kda_step_products(*self.ARGS, self.S)
        o_ref, S_ref = kda_step(*self.ARGS, self.S)  # default scale K^-1/2 on both
        assert_close(S_ref, S1, FP64_CHUNKED, "hand token: state")
        assert_close(o_ref, o, FP64_CHUNKED, "hand token: output")


LENGTHS_AND_CHUNKS = [(1, 64), (7, 4), (50, 2), (64, 16), (64, 64), (257, 64), (257, 32), (100, 1)]
CASES = [
    pytest.param(T, C, init, lb, id=f"T{T}-C{C}-{'init' if init else 'zero'}-lb{lb:g}")
    for T, C in [*LENGTHS_AND_CHUNKS, (130, 128)]
    for init in (False, True)
    for lb in (-5.0, -60.0)
]


class TestChunked:
    """kda_chunked against the float64 recurrence (FP64_CHUNKED)."""

    @pytest.mark.parametrize(("T", "C", "init", "lb"), CASES)
    def test_matches_recurrent_float64(self, T, C, init, lb):
        x = _inputs(T=T, seed=T + C, lb=lb)
        S0 = _state() if init else None
        o_ref, S_ref = kda_recurrent(*x, initial_state=S0)
        o, S = kda_chunked(*x, initial_state=S0, chunk_size=C)
        assert_close(o_ref, o, FP64_CHUNKED, "outputs")
        assert_close(S_ref, S, FP64_CHUNKED, "final state")

    def test_both_paths_are_exercised(self):
        """|g| <= 5 takes the anchored 16-token sub-chunks in fp32; |g| = 60 the halving path."""
        assert sub_chunk_size(torch.full((4,), -5.0), 64) == 16
        assert sub_chunk_size(torch.full((4,), -6.0), 64) == 1
        assert sub_chunk_size(torch.full((4,), -60.0, dtype=torch.float64), 64) == 1
        assert sub_chunk_size(torch.full((4,), -60.0, dtype=torch.float64), 8) == 8

    def test_segments_and_scale(self):
        """T beyond one 1024-token segment, a custom scale and B = 1."""
        x = _inputs(B=1, T=1100, H=1, K=4, V=3, seed=3)
        o_ref, S_ref = kda_recurrent(*x, scale=0.3)
        o, S = kda_chunked(*x, scale=0.3)
        assert_close(o_ref, o, FP64_CHUNKED, "outputs")
        assert_close(S_ref, S, FP64_CHUNKED, "final state")

    @pytest.mark.parametrize("lb", [-5.0, -50.0], ids=["lb-5", "lb-50"])
    def test_fp32_chunk64_is_finite(self, lb):
        """The naive split overflows fp32 here; the lab's chunked form stays finite and close."""
        x = _inputs(B=1, T=128, H=2, K=16, V=16, dtype=torch.float32, seed=5, lb=lb)
        G = x[3].cumsum(1)  # [B, T, H, K] cumulative gates of one 128-token chunk
        assert torch.isinf(torch.exp(-G[:, :64])).any()
        o_ref, S_ref = kda_recurrent(*(t.double() for t in x))  # float64 ground truth
        o, S = kda_chunked(*x, chunk_size=64)
        assert bool(torch.isfinite(o).all() and torch.isfinite(S).all())
        assert_close(o_ref, o, FP32_ORACLE, "fp32 chunked vs float64 recurrent, outputs")
        assert_close(S_ref, S, FP32_ORACLE, "fp32 chunked vs float64 recurrent, state")

    def test_empty_sequence(self):
        """T = 0: empty outputs and the initial state back (a copy)."""
        x = _inputs(T=0)
        S0 = _state()
        for fn in (kda_recurrent, kda_chunked):
            o, S = fn(*x, initial_state=S0)
            assert o.shape == (2, 0, 3, 5) and S is not S0
            assert_close(S0, S, EXACT, fn.__name__)


@pytest.mark.parametrize("fn", [kda_recurrent, kda_chunked], ids=["recurrent", "chunked"])
@pytest.mark.parametrize("p", [1, 37, 64, 100])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["fp32", "fp64"])
def test_causality(fn, p, dtype):
    """Perturbing every input at positions >= p leaves outputs before p bit-identical."""
    x = _inputs(B=1, T=150, H=2, K=8, V=4, dtype=dtype, seed=11)
    y = _inputs(B=1, T=150, H=2, K=8, V=4, dtype=dtype, seed=12)
    mixed = [torch.cat((a[:, :p], b[:, p:]), dim=1) for a, b in zip(x, y, strict=True)]
    o_x, _ = fn(*x)
    o_m, _ = fn(*mixed)
    assert_close(o_x[:, :p], o_m[:, :p], EXACT, f"outputs before {p}")
    assert (o_x[:, p:] - o_m[:, p:]).abs().max() > 0


def test_segment_transition_is_the_affine_map():
    """final(S0) = M S0 + final(0): a segment is affine in its start state."""
    x = _inputs(T=23, seed=4)
    S0 = _state()
    M = segment_transition(x[1], x[3], x[4])
    _, S_from = kda_recurrent(*x, initial_state=S0)
    _, S_zero = kda_recurrent(*x)
    assert_close(S_from, M @ S0 + S_zero, FP64_CHUNKED, "affine map")


BAD = [
    pytest.param(lambda x: kda_recurrent(x[0][0], *x[1:]), "q", id="q-3d"),
    pytest.param(lambda x: kda_recurrent(x[0], x[1][:, :3], *x[2:]), "k", id="k-shape"),
    pytest.param(lambda x: kda_recurrent(*x[:4], x[4][..., :2]), "beta", id="beta-shape"),
    pytest.param(lambda x: kda_recurrent(x[0], x[1], x[2].float(), *x[3:]), "v", id="v-dtype"),
    pytest.param(
        lambda x: kda_recurrent(*x, initial_state=torch.zeros(2, 3, 8, 4)), "state", id="state"
    ),
    pytest.param(lambda x: kda_chunked(*x, chunk_size=48), "chunk_size", id="chunk-48"),
    pytest.param(lambda x: kda_chunked(*x, chunk_size=0), "chunk_size", id="chunk-0"),
    pytest.param(lambda x: kda_chunked(*x, scale=-1.0), "scale", id="scale"),
    pytest.param(lambda x: kda_step(*(t[:, 0] for t in x), None), "state", id="step-no-state"),
    pytest.param(lambda x: segment_transition(x[1], x[3][:, :2], x[4]), "g", id="transition-g"),
]


@pytest.mark.parametrize(("call", "name"), BAD)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ParamError, match=name):
        call(list(_inputs(T=4)))


def test_empty_key_or_value_width_is_a_clear_error():
    """K = 0 used to divide by zero in the default scale."""
    z = torch.zeros(1, 2, 1, 0)
    with pytest.raises(ParamError, match="K and V"):
        kda_recurrent(z, z, torch.zeros(1, 2, 1, 3), z, torch.zeros(1, 2, 1))
