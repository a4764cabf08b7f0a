"""The lab's KDA against flash-linear-attention's naive reference (fla-core wheel, by file path).

Pinned: kda_recurrent matches naive_recurrent_kda and kda_chunked matches naive_chunk_kda in
float32 (max relative error <= 1e-4, FP32_ORACLE), outputs and final state, over several shapes,
seeds and gate ranges down to the K3 lower bound -5; loading the oracle never imports the `fla`
package (which would pull in Triton). A missing fla-core fails the suite: it is pinned in
requirements-dev.txt and an oracle that skips checks nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from core.kda import kda_chunked, kda_recurrent
from core.kda.reference import load_fla_kda_naive
from core.speculative.drafts import DraftProjections
from tests.tolerance import FP32_ORACLE, assert_close

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def fla():
    module = load_fla_kda_naive()
    if module is None:  # an oracle that is silently skipped checks nothing: fail instead
        pytest.fail("fla-core (fla/ops/kda/naive.py) is missing: "
                    "pip install -r requirements-dev.txt")
    return module


def _inputs(B, T, H, K, V, seed, lb):
    d = DraftProjections.from_random(B, T, H, K, V, torch.float32, seed=seed, gate_lower_bound=lb)
    return d.q, d.k, d.v, d.g, d.beta


def _state(B, H, K, V, seed):
    return torch.randn(B, H, K, V, generator=torch.Generator().manual_seed(seed))


RECURRENT = [
    pytest.param(1, 64, 2, 32, 32, 0, -5.0, False, id="B1-T64-H2-K32-lb5"),
    pytest.param(2, 37, 3, 16, 24, 1, -1.0, True, id="B2-T37-H3-K16-V24-lb1-init"),
    pytest.param(1, 100, 1, 64, 64, 2, -0.1, False, id="B1-T100-K64-lb0.1"),
    pytest.param(2, 50, 2, 8, 8, 3, -5.0, True, id="B2-T50-K8-lb5-init"),
]


@pytest.mark.parametrize(("B", "T", "H", "K", "V", "seed", "lb", "init"), RECURRENT)
def test_recurrent_matches_fla(fla, B, T, H, K, V, seed, lb, init):
    """kda_recurrent == fla naive_recurrent_kda (float32)."""
    x = _inputs(B, T, H, K, V, seed, lb)
    S0 = _state(B, H, K, V, seed) if init else None
    o_ref, S_ref = fla.naive_recurrent_kda(*x, initial_state=S0, output_final_state=True)
    o, S = kda_recurrent(*x, initial_state=S0)
    assert_close(o_ref, o, FP32_ORACLE, "outputs")
    assert_close(S_ref, S, FP32_ORACLE, "final state")


CHUNKED = [
    pytest.param(1, 128, 2, 32, 32, 64, 0, -5.0, False, id="B1-T128-C64-lb5"),
    pytest.param(2, 64, 3, 16, 16, 16, 1, -5.0, True, id="B2-T64-C16-lb5-init"),
    pytest.param(1, 96, 2, 16, 32, 32, 2, -1.0, False, id="B1-T96-C32-V32-lb1"),
    pytest.param(1, 192, 1, 64, 64, 64, 3, -0.1, True, id="B1-T192-C64-K64-lb0.1-init"),
]


@pytest.mark.parametrize(("B", "T", "H", "K", "V", "C", "seed", "lb", "init"), CHUNKED)
def test_chunked_matches_fla(fla, B, T, H, K, V, C, seed, lb, init):
    """kda_chunked == fla naive_chunk_kda (float32; T a multiple of the chunk size)."""
    x = _inputs(B, T, H, K, V, seed, lb)
    S0 = _state(B, H, K, V, seed) if init else None
    o_ref, S_ref = fla.naive_chunk_kda(*x, initial_state=S0, output_final_state=True, chunk_size=C)
    o, S = kda_chunked(*x, initial_state=S0, chunk_size=C)
    assert_close(o_ref, o, FP32_ORACLE, "outputs")
    assert_close(S_ref, S, FP32_ORACLE, "final state")


def test_oracle_is_loaded_without_importing_fla(fla):
    """The module comes from the wheel's file; in a fresh interpreter `fla` stays unimported."""
    assert fla.__file__.endswith("fla/ops/kda/naive.py")
    _, S = fla.naive_recurrent_kda(*_inputs(1, 2, 1, 4, 4, 0, -1.0))
    assert S is None
    probe = (
        "import sys; from core.kda.reference import load_fla_kda_naive; "
        "assert load_fla_kda_naive() is not None; "
        "assert 'fla' not in sys.modules and 'triton' not in sys.modules"
    )
    root = Path(__file__).resolve().parents[3]
    subprocess.run([sys.executable, "-c", probe], cwd=root, check=True, timeout=120)
