"""Fixtures shared with the model tests: the shipped model, loaded once."""

from tests.core.model.conftest import shipped  # noqa: F401
