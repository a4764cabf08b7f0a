"""Shared, cached loads of the shipped model, its routing trace and its training record."""

from __future__ import annotations

import functools

from core.dims import K3
from core.model.config import ModelDims
from core.model.corpus import DOMAINS
from core.model.model import HybridLM
from core.model.trace import TRACE_FILE, RoutingTrace, load
from core.model.usage import training_record
from core.model.weights import ASSET_DIR, dims_of, load_model, read_manifest

__all__ = ["DOMAINS", "K3", "PROMPTS", "dims", "model", "record", "trace"]

# One opening per corpus domain, so the sample shows what the model learned of each.
PROMPTS = {
    "arithmetic": b"17 + 25 = ",
    "records": b'{"id": ',
    "code": b"import os\n",
    "prose": b"The ",
}


@functools.cache
def dims() -> ModelDims:
    """The shipped model's dimensions, from its manifest: the tabs declare their sliders with
    them while the app is built, before any shard is read (load_model builds the model from
    the same manifest after checking every shard's sha256)."""
    return dims_of(read_manifest(ASSET_DIR))


@functools.cache
def model() -> HybridLM:
    return load_model()


@functools.cache
def trace() -> RoutingTrace:
    return load(ASSET_DIR / TRACE_FILE)


@functools.cache
def record() -> tuple[list[dict], dict]:
    return training_record()
