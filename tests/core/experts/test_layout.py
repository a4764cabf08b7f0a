"""ExpertLayout validates its fields with ParamError naming the field (asserts vanish under -O)."""

from __future__ import annotations

import pytest

from core.errors import ParamError
from core.experts import K3_LAYOUT, ExpertLayout

PAIRS = (("w1", "weight_packed"), ("w1", "weight_scale"))


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"template": "layers.{expert}.{w}.{part}"}, "template must contain {layer}"),
    ({"template": "layers.{layer}.{w}.{part}"}, "template must contain {expert}"),
    ({"template": "layers.{layer}.{expert}.{bias}"}, "template may use only"),
    ({"template": "layers.{layer}.{expert}.{0}"}, "template may use only"),
    ({"template": "layers.{layer}.{expert}.{w"}, "template may use only"),
    ({"parts": (), "short_names": ()}, "parts must name at least one tensor"),
    ({"parts": PAIRS, "short_names": ("a",)}, "short_names must give one name per part (2)"),
    ({"parts": PAIRS[:1], "short_names": ("a",)}, "parts must come in (packed, scale) pairs"),
], ids=["no-layer", "no-expert", "unknown-field", "positional", "unbalanced", "no-parts",
        "short-names", "mxfp4-odd"])
def test_bad_layout_raises_param_error_naming_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ParamError) as err:
        ExpertLayout(**kwargs)
    assert field in str(err.value)


def test_valid_layouts() -> None:
    """Upstream's six MXFP4 tensors; an odd part count is fine without mxfp4."""
    assert K3_LAYOUT.name(3, 7, 5) == \
        "language_model.model.layers.3.block_sparse_moe.experts.7.w3.weight_scale"
    one = ExpertLayout("m.{layer}.{expert}.{w}", (("w", ""),), ("w",), mxfp4=False)
    assert one.name(0, 2, 0) == "m.0.2.w"
