"""Shipped weights: a trunk shard, expert shards with checkpoint names, a sha256 manifest.

assets/model/
  trunk.safetensors                     every non-expert tensor (module state_dict names)
  experts-0000i-of-0000n.safetensors    routed experts, MODEL_TEMPLATE names, float32
  manifest.json                         dims, and sha256 + size of every shard
`load_model` checks the manifest before reading a byte; any missing or corrupt file raises
ModelWeightsError naming the file, the problem and the rebuild command. Reading the manifest
itself needs no torch: core/model/manifest.py.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import torch
from safetensors.numpy import save_file
from safetensors.torch import load_file

from core.model.manifest import (
    ASSET_DIR,
    MANIFEST,
    REBUILD,
    ModelWeightsError,
    dims_of,
    read_manifest,
)
from core.model.model import HybridLM
from core.model.providers import MODEL_LAYOUT, expert_tensors

TRUNK = "trunk.safetensors"
EXPERT_KEYS = ("moe.w1", "moe.w2", "moe.w3")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def expert_shard_name(i: int, n: int) -> str:
    return f"experts-{i + 1:05d}-of-{n:05d}.safetensors"


def save_model(model: HybridLM, directory: Path = ASSET_DIR, n_expert_shards: int = 2,
               extra: dict[str, object] | None = None) -> dict[str, object]:
    """Write trunk + expert shards + manifest into directory; returns the manifest."""
    d = model.dims
    directory.mkdir(parents=True, exist_ok=True)
    trunk = {k: v.detach().contiguous().numpy() for k, v in model.state_dict().items()
             if not k.endswith(EXPERT_KEYS)}
    save_file(trunk, str(directory / TRUNK))
    tensors = expert_tensors([(b.moe.w1, b.moe.w2, b.moe.w3) for b in model.blocks])
    per = -(-d.n_layers // n_expert_shards)
    files = [TRUNK]
    for i in range(n_expert_shards):
        layers = range(i * per, min((i + 1) * per, d.n_layers))
        names = [MODEL_LAYOUT.name(L, e, w) for L in layers for e in range(d.n_experts)
                 for w in range(3)]
        save_file({n: tensors[n] for n in names}, str(directory / expert_shard_name(
            i, n_expert_shards)))
        files.append(expert_shard_name(i, n_expert_shards))
    manifest = {
        "dims": dataclasses.asdict(d),
        "rebuild": REBUILD,
        "files": {f: {"sha256": sha256(directory / f), "bytes": (directory / f).stat().st_size}
                  for f in files},
        **(extra or {}),
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def verify(directory: Path = ASSET_DIR) -> dict[str, object]:
    """Check every file of the manifest exists with its size and sha256; returns the manifest."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    for name, meta in manifest["files"].items():
        path = directory / name
        if not path.is_file():
            raise ModelWeightsError(path, "shard is missing")
        size = path.stat().st_size
        if size != meta["bytes"]:
            raise ModelWeightsError(path, f"shard is {size} B, manifest says {meta['bytes']} B")
        if sha256(path) != meta["sha256"]:
            raise ModelWeightsError(path, "sha256 differs from the manifest (corrupt shard)")
    return manifest


def load_model(directory: Path = ASSET_DIR) -> HybridLM:
    """The shipped model, every expert resident, in eval mode; raises ModelWeightsError."""
    directory = Path(directory)
    manifest = verify(directory)
    model = HybridLM(dims_of(manifest))
    state = load_file(str(directory / TRUNK))
    experts: dict[str, torch.Tensor] = {}
    for f in manifest["files"]:
        if f != TRUNK:
            experts.update(load_file(str(directory / f)))
    for L in range(model.dims.n_layers):
        for i, w in enumerate(("w1", "w2", "w3")):
            names = [MODEL_LAYOUT.name(L, e, i) for e in range(model.dims.n_experts)]
            absent = [n for n in names if n not in experts]
            if absent:
                raise ModelWeightsError(directory, f"no shard holds {absent[0]!r}")
            state[f"blocks.{L}.moe.{w}"] = torch.stack([experts[n] for n in names])
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise ModelWeightsError(directory / TRUNK,
                                f"tensors missing {missing[:3]} / unexpected {unexpected[:3]}")
    return model.eval()
