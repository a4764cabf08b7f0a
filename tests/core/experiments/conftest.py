"""Fixtures shared with the model tests: the shipped model (loaded once), the tiny shards."""

from tests.core.model.conftest import shipped, tiny_dir  # noqa: F401
