"""kda_chunked_autograd, the training path: outputs AND gradients equal the float64 recurrence.

Pinned: outputs and the gradients with respect to q, k, v, g, beta and the initial state agree
with kda_recurrent (autograd through the step loop) to 1e-8 in float64, for ragged T, several
chunk sizes, gates uniform in [-5, 0], at the floor (-5 everywhere), extreme (-1000: only the
pairwise path can form those decays) and none (0); both decay paths where they apply; the
anchored path is chosen exactly when its exponents fit the dtype; finite differences agree
(gradcheck); bad input names the parameter.
"""

from __future__ import annotations

import pytest
import torch

from core.errors import ParamError
from core.kda import kda_chunked, kda_recurrent
from core.kda.differentiable import anchored_ok, kda_chunked_autograd, unit_lower_inverse
from tests.tolerance import Tolerance, assert_close

GRAD_ORACLE = Tolerance("float64 chunked autograd vs recurrent, values and gradients",
                        max_abs=1e-8)
FP32_TRAIN = Tolerance("float32 training path vs float32 kda_chunked", max_abs=1e-4)
GATES = {"uniform": (-5.0, 0.0), "floor": (-5.0, -5.0), "extreme": (-1000.0, -900.0),
         "none": (0.0, 0.0)}


def _inputs(B=2, T=9, H=3, K=8, V=5, gate=(-5.0, 0.0), dtype=torch.float64, seed=0):
    """q, k (L2-normalised), v, g uniform in gate, beta in (0, 1), state: leaves with grads."""
    gen = torch.Generator().manual_seed(seed)

    def randn(*s):
        return torch.randn(*s, generator=gen, dtype=torch.float64)

    q = torch.nn.functional.normalize(randn(B, T, H, K), dim=-1)
    k = torch.nn.functional.normalize(randn(B, T, H, K), dim=-1)
    lo, hi = gate
    g = lo + (hi - lo) * torch.rand(B, T, H, K, generator=gen, dtype=torch.float64)
    xs = (q, k, randn(B, T, H, V), g, torch.sigmoid(randn(B, T, H)), randn(B, H, K, V))
    return [x.to(dtype).requires_grad_() for x in xs]


def _values_and_grads(fn, xs, seed=1):
    """(o, S, d/dq, d/dk, d/dv, d/dg, d/dbeta, d/dS0) of a random linear loss of o and S."""
    o, S = fn(*xs)
    gen = torch.Generator().manual_seed(seed)
    wo = torch.randn(o.shape, generator=gen, dtype=torch.float64).to(o.dtype)
    ws = torch.randn(S.shape, generator=gen, dtype=torch.float64).to(S.dtype)
    grads = torch.autograd.grad((o * wo).sum() + (S * ws).sum(), xs)
    return (o, S, *grads)


# (gate, path): None lets the gates choose; the anchored path cannot form exp(+-8000).
PATHS = [(g, a) for g in GATES for a in (None, True, False) if not (g == "extreme" and a)]
NAMES = ("o", "S", "dq", "dk", "dv", "dg", "dbeta", "dS0")


def _recurrent(q, k, v, g, beta, S0):
    return kda_recurrent(q, k, v, g, beta, initial_state=S0)


class TestGradientOracle:
    """Outputs and all six gradients against autograd through kda_recurrent (float64)."""

    @pytest.mark.parametrize("T", [1, 7, 16, 37])
    @pytest.mark.parametrize(("gate", "anchored"), PATHS, ids=[f"{g}-{a}" for g, a in PATHS])
    def test_matches_recurrent(self, T, gate, anchored):
        """Every output and gradient within 1e-8 of the recurrence, ragged last chunks too."""
        xs = _inputs(T=T, gate=GATES[gate], seed=T)
        want = _values_and_grads(_recurrent, xs)

        def fn(q, k, v, g, beta, S0):
            return kda_chunked_autograd(q, k, v, g, beta, initial_state=S0, anchored=anchored)

        for name, w, x in zip(NAMES, want, _values_and_grads(fn, xs), strict=True):
            assert_close(w, x, GRAD_ORACLE, f"T={T} {gate} {name}")

    @pytest.mark.parametrize("gate", list(GATES))
    def test_long(self, gate):
        """T = 100 (seven chunks, the last ragged), the path the gates choose."""
        xs = _inputs(T=100, gate=GATES[gate], seed=100)
        want = _values_and_grads(_recurrent, xs)
        got = _values_and_grads(lambda q, k, v, g, b, s: kda_chunked_autograd(
            q, k, v, g, b, initial_state=s), xs)
        for name, w, x in zip(NAMES, want, got, strict=True):
            assert_close(w, x, GRAD_ORACLE, f"T=100 {gate} {name}")

    @pytest.mark.parametrize("chunk", [1, 3, 8, 32])
    def test_chunk_sizes_and_zero_state(self, chunk):
        """Any chunk size; no initial state means zeros (gradients of the rest unchanged)."""
        q, k, v, g, beta, _ = _inputs(T=37, seed=chunk)
        xs = [q, k, v, g, beta]
        want = _values_and_grads(lambda *a: kda_recurrent(*a), xs)
        got = _values_and_grads(lambda *a: kda_chunked_autograd(*a, chunk_size=chunk), xs)
        for name, w, x in zip(NAMES[:-1], want, got, strict=True):
            assert_close(w, x, GRAD_ORACLE, f"chunk={chunk} {name}")

    def test_gradcheck(self):
        """Finite differences agree with backward on a small case (both paths)."""
        xs = _inputs(B=1, T=5, H=1, K=3, V=2, seed=7)
        for anchored in (True, False):
            assert torch.autograd.gradcheck(
                lambda q, k, v, g, b, s, a=anchored: kda_chunked_autograd(
                    q, k, v, g, b, initial_state=s, chunk_size=2, anchored=a), xs,
                fast_mode=True)


class TestPathsAndFloat32:
    def test_anchored_choice(self):
        """fp32 with the K3 floor (-5) and chunk 16 takes the anchored path; -1000 cannot."""
        assert anchored_ok(torch.full((4,), -5.0), 16)
        assert not anchored_ok(torch.full((4,), -8.0), 16)
        assert anchored_ok(torch.full((4,), -60.0, dtype=torch.float64), 16)
        assert not anchored_ok(torch.full((4,), -1000.0, dtype=torch.float64), 16)

    def test_fp32_floor_matches_inference_path(self):
        """fp32 at the floor, T=256: finite and within 1e-4 of kda_chunked (inference)."""
        q, k, v, g, beta, S0 = (x.detach().float() for x in _inputs(
            B=2, T=256, H=2, K=32, V=32, gate=(-5.0, -4.0), dtype=torch.float64, seed=3))
        o, S = kda_chunked_autograd(q, k, v, g, beta, initial_state=S0)
        o_ref, S_ref = kda_chunked(q, k, v, g, beta, initial_state=S0)
        assert torch.isfinite(o).all() and torch.isfinite(S).all()
        assert_close(o_ref, o, FP32_TRAIN, "o")
        assert_close(S_ref, S, FP32_TRAIN, "S")

    def test_unit_lower_inverse(self):
        """(I + A) T = I for strictly lower A of sizes 1..17."""
        for C in range(1, 18):
            A = torch.randn(3, C, C, dtype=torch.float64).tril(-1) * 0.5
            eye = torch.eye(C, dtype=torch.float64)
            assert_close(eye.expand(3, C, C), (eye + A) @ unit_lower_inverse(A),
                         Tolerance("inverse", max_abs=1e-12), f"C={C}")

    def test_empty_and_bad_input(self):
        """T = 0 gives no outputs and the initial state; chunk_size and shapes are named."""
        q, k, v, g, beta, S0 = _inputs(T=0)
        o, S = kda_chunked_autograd(q, k, v, g, beta, initial_state=S0)
        assert o.shape == (2, 0, 3, 5) and torch.equal(S, S0)
        q, k, v, g, beta, _ = _inputs(T=4)
        with pytest.raises(ParamError, match="chunk_size"):
            kda_chunked_autograd(q, k, v, g, beta, chunk_size=0)
        with pytest.raises(ParamError, match="beta"):
            kda_chunked_autograd(q, k, v, g, beta[..., :2])
