"""The shipped model's manifest, read without torch: where the weights live, their dimensions
and which weights they are.

  ASSET_DIR, MANIFEST, REBUILD    assets/model/, its manifest.json, the command that rebuilds it
  ModelWeightsError               a shipped file missing, corrupt or inconsistent (names the fix)
  read_manifest(directory)        the manifest (dims, and sha256 + size of every shard)
  dims_of(manifest)               its ModelDims
  shipped_dims()                  the shipped model's ModelDims, read once: tab controls are
                                  declared with them before any shard is read (or torch loads)
  fingerprint(directory)          a digest of the shard hashes: which weights a result was made on
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from core.model.config import ModelDims

ASSET_DIR = Path(__file__).resolve().parents[2] / "assets" / "model"
REBUILD = "python -m core.model.train"
MANIFEST = "manifest.json"


class ModelWeightsError(RuntimeError):
    """A shipped weight file is missing, corrupt or inconsistent; the message says how to fix."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}. Rebuild the weights with `{REBUILD}` "
                         f"(about 15 minutes on 2 idle CPU cores).")
        self.path = path


def read_manifest(directory: Path = ASSET_DIR) -> dict[str, object]:
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise ModelWeightsError(path, "manifest is missing")
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ModelWeightsError(path, f"manifest is unreadable ({e})") from None


def dims_of(manifest: dict[str, object]) -> ModelDims:
    return ModelDims(**manifest["dims"])


@functools.cache
def shipped_dims() -> ModelDims:
    return dims_of(read_manifest(ASSET_DIR))


def fingerprint(directory: str | Path = ASSET_DIR) -> str:
    """Digest of the model's shard hashes (its manifest): which weights a result was made on."""
    files = read_manifest(Path(directory))["files"]
    joined = ",".join(f"{name}:{files[name]['sha256']}" for name in sorted(files))
    return hashlib.sha256(joined.encode()).hexdigest()[:16]
