"""Shared fixtures: the tiny random model of tests/core/model, saved as shards, and loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.model.conftest import TINY, shipped, tiny_dir  # noqa: F401 (fixtures)

__all__ = ["TINY"]


@pytest.fixture(scope="session")
def tiny(tiny_dir: Path):  # noqa: F811
    from core.model.weights import load_model

    return load_model(tiny_dir)
