"""The KDA layer's two paths: training (grad enabled) runs kda_chunked_autograd, inference
(no grad) runs kda_chunked exactly as the shipped weights were made with.

Pinned: each path calls only its own kernel; in float64 the layer's parameter gradients equal
those through the token-by-token recurrence (the previous training scan) to 1e-8; in float32
the training forward agrees with the inference forward to 1e-4, with and without a state.
"""

from __future__ import annotations

import pytest
import torch

import core.model.layers as layers
from core.kda import kda_recurrent
from core.model.layers import KDA
from tests.core.model.conftest import TINY, tiny_model
from tests.tolerance import FP32_DECODE, Tolerance, assert_close

LAYER_GRADS = Tolerance("float64 KDA layer grads: chunked vs recurrent", max_abs=1e-8)


def _refuse(*_a, **_k):
    raise AssertionError("this kernel must not run on this path")


def test_each_path_runs_its_own_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """no_grad never touches the autograd kernel; training never touches kda_chunked."""
    model = tiny_model()
    x = torch.randint(0, 256, (2, 40), generator=torch.Generator().manual_seed(0))
    monkeypatch.setattr(layers, "kda_chunked_autograd", _refuse)
    with torch.no_grad():
        model(x)
    monkeypatch.undo()
    monkeypatch.setattr(layers, "kda_chunked", _refuse)
    model(x).logits.sum().backward()


def test_layer_gradients_match_recurrence(monkeypatch: pytest.MonkeyPatch) -> None:
    """float64: every KDA parameter's gradient equals the one through kda_recurrent."""
    torch.manual_seed(0)
    layer = KDA(TINY).double()
    x = torch.randn(2, 37, TINY.d_model, dtype=torch.float64)
    w = torch.randn(2, 37, TINY.d_model, dtype=torch.float64)

    def grads() -> dict[str, torch.Tensor]:
        layer.zero_grad()
        (layer(x) * w).sum().backward()
        return {n: p.grad.clone() for n, p in layer.named_parameters()}

    got = grads()
    monkeypatch.setattr(layers, "kda_chunked_autograd",
                        lambda q, k, v, g, b, initial_state=None: kda_recurrent(
                            q, k, v, g, b, initial_state=initial_state))
    want = grads()
    assert want.keys() == got.keys()
    for name in want:
        assert got[name].abs().max() > 0, f"{name} gets no gradient"
        assert_close(want[name], got[name], LAYER_GRADS, name)


@pytest.mark.parametrize("split", [0, 29])
def test_training_forward_matches_inference(split: int) -> None:
    """float32 logits: grad-enabled forward vs no_grad forward, after a prefix state or not."""
    model = tiny_model()
    x = torch.randint(0, 256, (2, 61), generator=torch.Generator().manual_seed(1))
    outs = []
    for grad in (True, False):
        with torch.set_grad_enabled(grad):
            state = model.new_state(2)
            if split:
                model(x[:, :split], state)
            outs.append(model(x[:, split:], state).logits.detach())
    assert_close(outs[1], outs[0], FP32_DECODE, f"split={split}")
