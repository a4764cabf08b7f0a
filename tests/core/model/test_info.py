"""Serving bytes of the toy model against K3, like for like (reference §2 for the MXFP4 expert)."""

from __future__ import annotations

import pytest

from core.dims import K3
from core.errors import ParamError
from core.model.config import TOY
from core.model.info import K3_EXPERT_MXFP4_BYTES, mxfp4_bytes, report, serving_bytes


def test_k3_expert_is_the_real_checkpoint_size() -> None:
    """33,030,144 parameters at 4.25 bits = 17,547,264 B = 4,284 pages of 4 KiB."""
    assert K3.expert_params == 33_030_144
    assert K3_EXPERT_MXFP4_BYTES == 17_547_264 == 4_284 * 4096
    assert K3_EXPERT_MXFP4_BYTES * 8 == K3.expert_params * 4.25


def test_mxfp4_bytes_needs_whole_blocks() -> None:
    assert mxfp4_bytes(64) == 32 + 2
    for bad in (0, 33, -32):
        with pytest.raises(ParamError, match="params"):
            mxfp4_bytes(bad)


def test_serving_ratios_compare_like_with_like() -> None:
    """Expert 178.5x (not bf16's 672x); state S 384x; S + conv 310.2x; MLA latent 9x."""
    rows = {s.name: s for s in serving_bytes(TOY)}
    assert round(rows["one routed expert"].ratio, 1) == 178.5
    assert round(K3.expert_bytes / TOY.expert_bytes) == 672
    assert rows["KDA state S, 1 layer"].ratio == 384.0
    both = rows["KDA state S + conv tail, 1 layer"]
    assert both.toy == TOY.kda_recurrent_bytes + TOY.kda_conv_bytes
    assert both.k3 == K3.kda_state_bytes + K3.kda_conv_bytes
    assert round(both.ratio, 1) == 310.2
    assert rows["MLA latent, 1 token, 1 layer"].ratio == 9.0
    assert "17,547,264" in report()
