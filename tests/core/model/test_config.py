"""The dims ledger agrees with the real module, and the info CLI prints it."""

from __future__ import annotations

import pytest

from core.dims import K3
from core.model.config import TOY, ModelDims
from core.model.info import report
from core.model.model import HybridLM
from tests.core.model.conftest import TINY


@pytest.mark.parametrize("dims", [TINY, TOY], ids=["tiny", "toy"])
def test_param_ledger_matches_module(dims: ModelDims) -> None:
    """total_params and components() equal the nn.Module's parameter count."""
    n = sum(p.numel() for p in HybridLM(dims).parameters())
    assert dims.total_params == n == sum(dims.components().values())


def test_layout_and_k3() -> None:
    """Kimi Linear pattern KDA KDA KDA MLA; K3 counterpart matches reference §1."""
    assert TOY.layer_kinds[:4] == ("kda", "kda", "kda", "mla") and TOY.n_layers >= 4
    assert TOY.n_experts >= 16 and TOY.top_k >= 2
    assert K3.expert_params == 33_030_144 and K3.mla_bytes_per_token == 1152
    assert K3.kda_state_bytes == 6 * 2**20


def test_info_report() -> None:
    text = report()
    assert f"{TOY.total_params:,}" in text and "softmax" in text
