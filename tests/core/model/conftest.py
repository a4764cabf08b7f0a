"""Shared fixtures: a tiny randomly initialised model saved as shards, and the shipped model."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.model.config import ModelDims
from core.model.model import HybridLM
from core.model.weights import ASSET_DIR, save_model

TINY = ModelDims(d_model=32, n_layers=4, kda_heads=2, kda_head_dim=16, gate_rank=4,
                 mla_heads=2, mla_head_dim=16, kv_latent=8, n_experts=8, top_k=2,
                 expert_inner=16, shared_inner=32, context=64)


def tiny_model(seed: int = 0) -> HybridLM:
    torch.manual_seed(seed)
    return HybridLM(TINY).eval()


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model written as trunk + 2 expert shards + manifest."""
    d = tmp_path_factory.mktemp("tiny")
    save_model(tiny_model(), d)
    return d


@pytest.fixture(scope="session")
def shipped():
    """The shipped model (assets/model), loaded once."""
    from core.model.weights import load_model

    if not (ASSET_DIR / "manifest.json").is_file():
        pytest.fail("assets/model is missing: run `python -m core.model.train`")
    return load_model()
