"""Shared fixtures: the project's own fixture shards, the upstream file, and ground truth."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open

from core.experts import K3_LAYOUT, ExpertLayout, ExpertView, write_fixture

# kimi-k3-in-c v1.0.0's tests/fixtures/cache/, copied into the repository (data/README.md)
UPSTREAM_DIR = Path(__file__).resolve().parent / "data"
UPSTREAM_FILE = UPSTREAM_DIR / "model-00001-of-00001.safetensors"
UPSTREAM_SIZE = 59_776
UPSTREAM_SHA256 = "5f2a99cabe69e53459822c4703b525575fa826cfcf9ba3b543494d19ae00f50a"

STRIDE = 12_288
BUDGET_8 = 104_448  # 8 slots of 12,288 B
EXPERT_BYTES = 1_632


class Truth:
    """Expert bytes straight from safetensors.safe_open, never through the cache."""

    def __init__(self, directory: Path, layout: ExpertLayout = K3_LAYOUT) -> None:
        self.layout = layout
        self._by_name: dict[str, np.ndarray] = {}
        for path in sorted(Path(directory).glob("*.safetensors")):
            with safe_open(str(path), framework="numpy") as f:
                for name in f.keys():
                    self._by_name[name] = f.get_tensor(name)

    def tensors(self, layer: int, expert: int) -> list[np.ndarray]:
        return [
            self._by_name[self.layout.name(layer, expert, i)]
            for i in range(len(self.layout.parts))
        ]

    def payload(self, layer: int, expert: int) -> bytes:
        return b"".join(t.tobytes() for t in self.tensors(layer, expert))


def assert_exact(view: ExpertView, truth: Truth, layer: int, expert: int) -> None:
    """Every tensor of the view equals safe_open's: dtype, shape and bytes."""
    assert (view.layer, view.expert) == (layer, expert)
    want = truth.tensors(layer, expert)
    assert len(view) == len(want)
    for name, got, ref in zip(view.names, view.arrays, want, strict=True):
        assert got.shape == ref.shape, name
        assert got.tobytes() == ref.tobytes(), f"layer {layer} expert {expert} {name} differs"


@pytest.fixture(scope="session")
def k3_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's fixture: upstream geometry, bytes unique per tensor."""
    d = tmp_path_factory.mktemp("k3")
    write_fixture(d)
    return d


@pytest.fixture(scope="session")
def k3_truth(k3_dir: Path) -> Truth:
    return Truth(k3_dir)


@pytest.fixture(params=["own", "upstream"])
def battery_dir(request: pytest.FixtureRequest, k3_dir: Path) -> Path:
    """Both the project's fixture and the upstream file (part of the repository: never skipped)."""
    return k3_dir if request.param == "own" else UPSTREAM_DIR
