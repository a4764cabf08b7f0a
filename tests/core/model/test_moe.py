"""The MoE's expert-grouped fast path equals the whiteboard form (every expert on every token,
masked by the top-k weights); the router's scores are a softmax; bad input is refused."""

from __future__ import annotations

import pytest
import torch

from core.errors import ParamError
from core.model.moe import naive_moe
from tests.core.model.conftest import TINY, tiny_model


def test_grouped_equals_naive() -> None:
    """Relative error of the grouped path vs the dense masked form stays at float32 rounding."""
    model = tiny_model(2)
    moe = model.blocks[1].moe
    x = torch.randn(2, 9, TINY.d_model, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        fast, r = moe(x, model.resident())
        slow = naive_moe(moe, x)
    assert ((fast - slow).norm() / slow.norm()).item() < 1e-5
    assert torch.allclose(r.scores.sum(-1), torch.ones(18))
    assert torch.equal(r.ids, r.scores.topk(TINY.top_k, -1).indices)
    assert torch.allclose(r.weights.sum(-1), torch.ones(18))


def test_bad_input() -> None:
    """Out-of-vocabulary ids, wrong dtypes and empty prompts raise ParamError."""
    model = tiny_model()
    with pytest.raises(ParamError, match=r"\[0, 255\]"):
        model(torch.tensor([[1, 256]]))
    with pytest.raises(ParamError, match="int64"):
        model(torch.zeros(1, 3))
    with pytest.raises(ParamError, match="non-empty bytes"):
        model.generate(b"", 3)
    with pytest.raises(ParamError, match="one entry per sequence"):
        model.step(torch.tensor([1, 2]), model.new_state(1))
