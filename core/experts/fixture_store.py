"""A shared on-disk fixture per geometry: written once, atomically, verified by digest."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from core.experts.fixture import write_fixture


@functools.cache
def shared_fixture(geometry_json: str) -> Path:
    """The fixture for `geometry_json` (write_fixture's keyword arguments as sorted JSON),
    written once per geometry and writer under the temp dir, atomically: a fresh directory is
    filled, given a manifest of digests, then renamed into place. A damaged fixture is never
    reused; this process then keeps its own."""
    geometry = json.loads(geometry_json)
    source = Path(write_fixture.__code__.co_filename).read_bytes()  # new writer, new fixture
    tag = hashlib.blake2b(geometry_json.encode() + source, digest_size=8)
    root = Path(tempfile.gettempdir()) / "serving-lab-fixtures"
    final = root / tag.hexdigest()
    if intact(final):
        return final
    root.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=".writing-", dir=root))
    write_fixture(fresh, **geometry)
    manifest = {f.name: _digest(f) for f in sorted(fresh.glob("*.safetensors"))}
    (fresh / "manifest.json").write_text(json.dumps(manifest, sort_keys=True))
    fresh.chmod(0o755)  # mkdtemp's 0700 would hide it from other users of the temp dir
    try:
        os.rename(fresh, final)
    except OSError:  # another process won the race, or a damaged copy is in the way
        if intact(final):
            shutil.rmtree(fresh, ignore_errors=True)
            return final
        return fresh
    return final


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def intact(d: Path) -> bool:
    """True if d holds exactly the shards its manifest lists, with matching digests."""
    try:
        manifest = json.loads((d / "manifest.json").read_text())
        shards = sorted(f.name for f in d.glob("*.safetensors"))
        return bool(shards) and shards == sorted(manifest) and all(
            _digest(d / name) == want for name, want in manifest.items())
    except (OSError, ValueError):
        return False
