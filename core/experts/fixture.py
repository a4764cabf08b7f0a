"""Fixture writer: expert shards with kimi-k3-in-c's test geometry, plus variants it never had.

Defaults reproduce upstream tools/make_cache_fixture.py exactly: one layer of 24 experts, six
U8 tensors each (packed 8 x 64, scales 8 x 4: 1,632 payload bytes), header written with
json.dumps' default separators and space-padded to a multiple of 8 (20,600 B), so data starts
at 20,608 (deliberately unaligned) and the file is 59,776 B. `content="k3-v1"` writes
upstream's bytes (unique per expert only); the default "unique" content differs per tensor,
so a wrong slot or a wrong tensor offset is detectable.

Variants: several layers, dense leading layers without experts, several shards (experts
split in key order), and on-disk orders "canonical", "reversed" (contiguous but not in
canonical order) and "scattered" (tensor-major, so no expert is contiguous).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.errors import ParamError, check_choice, check_int
from core.experts.layout import K3_LAYOUT

ORDERS = ("canonical", "reversed", "scattered")
CONTENTS = ("unique", "k3-v1")


@dataclass(frozen=True, slots=True, kw_only=True)
class FixtureInfo:
    paths: tuple[Path, ...]
    n_layers: int
    n_experts: int
    dense_layers: int
    expert_bytes: int
    data_starts: tuple[int, ...]
    file_sizes: tuple[int, ...]


def expert_shapes(rows: int, packed_cols: int) -> list[tuple[int, int]]:
    """Shapes of an expert's six U8 tensors in canonical order: (packed, scale) x 3 matrices."""
    return [(rows, packed_cols), (rows, packed_cols * 2 // 32)] * 3


def expert_bytes(rows: int, packed_cols: int) -> int:
    """Payload bytes of one fixture expert (1,632 at upstream's rows 8, packed_cols 64)."""
    return sum(r * c for r, c in expert_shapes(rows, packed_cols))


def tensor_content(layer: int, expert: int, i: int, nbytes: int, content: str) -> np.ndarray:
    """The bytes of tensor i (canonical order) of an expert: (nbytes,) uint8."""
    if content == "k3-v1":  # byte j = (j + base) mod 251, base from expert, matrix, is-scale
        base = (977 * expert + 31 * (i // 2) + 7 * (i % 2)) & 0xFF
        return ((np.arange(nbytes) + base) % 251).astype(np.uint8)
    digest = hashlib.blake2b(f"{layer}/{expert}/{i}".encode(), digest_size=8).digest()
    rng = np.random.default_rng(int.from_bytes(digest, "little"))
    return np.frombuffer(rng.bytes(nbytes), np.uint8)


def write_fixture(
    directory: str | os.PathLike[str],
    *,
    n_layers: int = 1,
    n_experts: int = 24,
    n_shards: int = 1,
    dense_layers: int = 0,
    rows: int = 8,
    packed_cols: int = 64,
    order: str = "canonical",
    content: str = "unique",
) -> FixtureInfo:
    """Write `model-0000i-of-0000n.safetensors` shards into `directory` (created if needed)."""
    n_layers = check_int("n_layers", n_layers, 1, 1024)
    n_experts = check_int("n_experts", n_experts, 1, 4096)
    dense_layers = check_int("dense_layers", dense_layers, 0, n_layers - 1)
    n_keys = (n_layers - dense_layers) * n_experts
    n_shards = check_int("n_shards", n_shards, 1, n_keys)
    rows = check_int("rows", rows, 1, 1 << 16)
    packed_cols = check_int("packed_cols", packed_cols, 16, 1 << 20)
    if packed_cols % 16:
        raise ParamError(f"packed_cols must be a multiple of 16 in [16, 2**20], got {packed_cols}")
    check_choice("order", order, ORDERS)
    check_choice("content", content, CONTENTS)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)

    shapes = expert_shapes(rows, packed_cols)
    keys = [(L, e) for L in range(dense_layers, n_layers) for e in range(n_experts)]
    per = -(-len(keys) // n_shards)
    paths, starts, sizes = [], [], []
    for k in range(n_shards):
        block = keys[k * per : (k + 1) * per]
        items = _items(block, order)
        if k == 0:
            items = [(f"language_model.model.layers.{L}.mlp.dense.weight", -1, L, -1)
                     for L in range(dense_layers)] + items
        path = out / f"model-{k + 1:05d}-of-{n_shards:05d}.safetensors"
        start, size = _write_shard(path, items, shapes, content, rows)
        paths.append(path)
        starts.append(start)
        sizes.append(size)
    return FixtureInfo(paths=tuple(paths), n_layers=n_layers, n_experts=n_experts,
                       dense_layers=dense_layers, expert_bytes=expert_bytes(rows, packed_cols),
                       data_starts=tuple(starts), file_sizes=tuple(sizes))


def _items(block: list[tuple[int, int]], order: str) -> list[tuple[str, int, int, int]]:
    """(name, tensor index, layer, expert) in on-disk order."""
    n = len(K3_LAYOUT.parts)
    if order == "canonical":
        seq = [(L, e, i) for L, e in block for i in range(n)]
    elif order == "reversed":
        seq = [(L, e, i) for L, e in block for i in reversed(range(n))]
    else:
        seq = [(L, e, i) for i in range(n) for L, e in block]
    return [(K3_LAYOUT.name(L, e, i), i, L, e) for L, e, i in seq]


def _write_shard(
    path: Path,
    items: list[tuple[str, int, int, int]],
    shapes: list[tuple[int, int]],
    content: str,
    rows: int,
) -> tuple[int, int]:
    meta: dict[str, dict[str, object]] = {}
    off = 0
    for name, i, _, _ in items:
        shape = shapes[i] if i >= 0 else (rows, 8)
        nbytes = shape[0] * shape[1]
        meta[name] = {"dtype": "U8", "shape": list(shape), "data_offsets": [off, off + nbytes]}
        off += nbytes
    header = json.dumps(meta).encode()
    header += b" " * (-len(header) % 8)
    with open(path, "wb") as f:
        f.write(len(header).to_bytes(8, "little"))
        f.write(header)
        for _name, i, L, e in items:
            if i < 0:
                f.write(np.full(rows * 8, L, np.uint8).tobytes())
            else:
                f.write(tensor_content(L, e, i, shapes[i][0] * shapes[i][1], content).tobytes())
    return 8 + len(header), 8 + len(header) + off
