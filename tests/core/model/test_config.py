"""The dims ledger agrees with the real module, and the info CLI prints it."""

from __future__ import annotations

import pytest

from core.dims import K3
from core.errors import ParamError
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


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n_layers": 6}, "n_layers must be a multiple of mla_every=4"),
    ({"top_k": 1}, "top_k"),
    ({"top_k": 16}, "top_k"),
    ({"mla_every": 1}, "mla_every"),
    ({"gate_lower_bound": 0.0}, "gate_lower_bound"),
    ({"d_model": 0}, "d_model"),
])
def test_bad_dims_name_the_field(kwargs, match):
    """Validation is ParamError, not assert: it must survive python -O."""
    with pytest.raises(ParamError, match=match):
        ModelDims(**kwargs)
