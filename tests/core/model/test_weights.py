"""Shipped weights: a manifest checked at load, clear errors naming the file and the rebuild
command for a missing or corrupt shard, and a size budget."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from safetensors import safe_open

from core.model.config import TOY
from core.model.providers import MODEL_LAYOUT
from core.model.weights import ASSET_DIR, REBUILD, ModelWeightsError, load_model, verify
from tests.core.model.conftest import tiny_model

BUDGET = 20_000_000


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_round_trip(tiny_dir: Path) -> None:
    """Saved then loaded, the tiny model's parameters are identical."""
    want, got = tiny_model().state_dict(), load_model(tiny_dir).state_dict()
    assert want.keys() == got.keys()
    assert all(torch.equal(want[k], got[k]) for k in want)


def test_missing_shard(tiny_dir: Path, tmp_path: Path) -> None:
    """A missing expert shard names the file and the rebuild command."""
    d = _copy(tiny_dir, tmp_path / "m")
    (d / "experts-00002-of-00002.safetensors").unlink()
    with pytest.raises(ModelWeightsError, match="experts-00002-of-00002.*missing") as e:
        load_model(d)
    assert REBUILD in str(e.value)


@pytest.mark.parametrize("where", ["trunk.safetensors", "experts-00001-of-00002.safetensors"])
def test_corrupt_shard(tiny_dir: Path, tmp_path: Path, where: str) -> None:
    """One flipped byte is caught by the sha256 check before any tensor is used."""
    d = _copy(tiny_dir, tmp_path / "c")
    raw = bytearray((d / where).read_bytes())
    raw[-5] ^= 0xFF
    (d / where).write_bytes(bytes(raw))
    with pytest.raises(ModelWeightsError, match=f"{where}.*sha256.*{REBUILD}"):
        load_model(d)


def test_truncated_and_no_manifest(tiny_dir: Path, tmp_path: Path) -> None:
    """A truncated shard reports its size; a missing manifest says so."""
    d = _copy(tiny_dir, tmp_path / "t")
    p = d / "trunk.safetensors"
    p.write_bytes(p.read_bytes()[:100])
    with pytest.raises(ModelWeightsError, match="trunk.safetensors: shard is 100 B"):
        verify(d)
    (d / "manifest.json").unlink()
    with pytest.raises(ModelWeightsError, match="manifest is missing"):
        load_model(d)


def test_shipped_manifest_and_budget() -> None:
    """Every shipped file verifies; all of assets/model stays within 20 MB."""
    manifest = verify(ASSET_DIR)
    total = sum(f.stat().st_size for f in ASSET_DIR.iterdir() if f.is_file())
    assert total <= BUDGET, total
    assert len(manifest["files"]) >= 3


def test_shipped_expert_names() -> None:
    """Expert shards hold exactly the checkpoint-named experts, float32, w2 [D, I]."""
    names: set[str] = set()
    for f in sorted(ASSET_DIR.glob("experts-*.safetensors")):
        with safe_open(str(f), framework="numpy") as s:
            names |= set(s.keys())
    want = {MODEL_LAYOUT.name(L, e, i) for L in range(TOY.n_layers)
            for e in range(TOY.n_experts) for i in range(3)}
    assert names == want
    with safe_open(str(ASSET_DIR / "experts-00001-of-00002.safetensors"), "numpy") as s:
        w2 = s.get_tensor(MODEL_LAYOUT.name(0, 0, 1))
    assert w2.shape == (TOY.d_model, TOY.expert_inner) and str(w2.dtype) == "float32"
