"""Safetensors shard index: parses headers itself and validates every byte range.

A shard is `u64 little-endian header length | JSON header | data`. Each tensor's
`data_offsets` are relative to the end of the header; the index stores absolute file
offsets so readers never redo that arithmetic. `safetensors.safe_open` is the ground truth
in tests, never a dependency here.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from core.experts.errors import ShardFormatError

# Byte size of each safetensors dtype the index accepts (sub-byte float formats are refused).
DTYPE_BYTES: dict[str, int] = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1,
    "U16": 2, "I16": 2, "F16": 2, "BF16": 2,
    "U32": 4, "I32": 4, "F32": 4,
    "U64": 8, "I64": 8, "F64": 8, "C64": 8,
}
MAX_HEADER_BYTES = 100 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class TensorEntry:
    """One tensor: where its bytes lie in which shard (offset is absolute in the file)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    shard: int
    offset: int
    nbytes: int

    @property
    def end(self) -> int:
        return self.offset + self.nbytes


@dataclass(frozen=True, slots=True)
class ShardHeader:
    """One parsed shard: its path, size, where data starts, and its tensors in offset order."""

    path: Path
    file_size: int
    data_start: int
    tensors: tuple[TensorEntry, ...]


def _dup_checking_object(path: Path):
    def hook(pairs: list[tuple[str, object]]) -> dict[str, object]:
        out: dict[str, object] = {}
        for k, v in pairs:
            if k in out:
                raise ShardFormatError(path, f"duplicate key {k!r} in header")
            out[k] = v
        return out

    return hook


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def parse_header(path: str | os.PathLike[str], shard: int = 0) -> ShardHeader:
    """Parse and validate one shard's header. Raises ShardFormatError naming file and problem."""
    p = Path(path)
    try:
        size = p.stat().st_size
        with open(p, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise ShardFormatError(p, f"file is {size} bytes, shorter than the 8-byte length")
            (n,) = struct.unpack("<Q", head)
            if n < 2 or n > MAX_HEADER_BYTES:
                raise ShardFormatError(p, f"header length {n} outside [2, {MAX_HEADER_BYTES}]")
            if 8 + n > size:
                raise ShardFormatError(p, f"header length {n} runs past end of file ({size} B)")
            raw = f.read(n)
    except OSError as e:
        raise ShardFormatError(p, f"cannot read: {e.strerror or e}") from None
    try:
        meta = json.loads(raw.decode("utf-8"), object_pairs_hook=_dup_checking_object(p))
    except UnicodeDecodeError:
        raise ShardFormatError(p, "header is not UTF-8") from None
    except json.JSONDecodeError as e:
        raise ShardFormatError(p, f"header is not valid JSON ({e.msg} at {e.pos})") from None
    if not isinstance(meta, dict):
        raise ShardFormatError(p, "header JSON is not an object")
    data_start = 8 + n
    tensors = [
        _entry(p, name, spec, shard, data_start, size)
        for name, spec in meta.items()
        if name != "__metadata__"
    ]
    if "__metadata__" in meta and not (
        isinstance(meta["__metadata__"], dict)
        and all(isinstance(v, str) for v in meta["__metadata__"].values())
    ):
        raise ShardFormatError(p, "__metadata__ must map strings to strings")
    tensors.sort(key=lambda t: (t.offset, t.end))
    for a, b in zip(tensors, tensors[1:], strict=False):
        if b.offset < a.end:
            raise ShardFormatError(p, f"tensors {a.name!r} and {b.name!r} overlap")
    return ShardHeader(p, size, data_start, tuple(tensors))


def _entry(
    p: Path, name: str, spec: object, shard: int, data_start: int, size: int
) -> TensorEntry:
    if not isinstance(spec, dict):
        raise ShardFormatError(p, f"entry {name!r} is not an object")
    missing = {"dtype", "shape", "data_offsets"} - spec.keys()
    if missing:
        raise ShardFormatError(p, f"entry {name!r} lacks {sorted(missing)}")
    dtype, shape, offs = spec["dtype"], spec["shape"], spec["data_offsets"]
    if dtype not in DTYPE_BYTES:
        raise ShardFormatError(p, f"entry {name!r} has unsupported dtype {dtype!r}")
    if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
        raise ShardFormatError(p, f"entry {name!r} has a bad shape {shape!r}")
    if not (isinstance(offs, list) and len(offs) == 2 and all(_is_int(o) for o in offs)):
        raise ShardFormatError(p, f"entry {name!r} has bad data_offsets {offs!r}")
    begin, end = offs
    if not 0 <= begin <= end:
        raise ShardFormatError(p, f"entry {name!r} has data_offsets {offs} out of order")
    numel = 1
    for d in shape:
        numel *= d
    want = numel * DTYPE_BYTES[dtype]
    if end - begin != want:
        raise ShardFormatError(
            p, f"entry {name!r}: span {end - begin} B != {dtype} size x numel = {want} B"
        )
    if data_start + end > size:
        raise ShardFormatError(
            p, f"entry {name!r} ends at byte {data_start + end}, past end of file ({size} B)"
        )
    return TensorEntry(name=name, dtype=dtype, shape=tuple(shape), shard=shard,
                       offset=data_start + begin, nbytes=end - begin)


class ShardIndex:
    """Every tensor of a checkpoint (one shard or a directory of shards), by name."""

    def __init__(self, headers: list[ShardHeader]) -> None:
        self.headers = tuple(headers)
        self.paths = tuple(h.path for h in headers)
        self._by_name: dict[str, TensorEntry] = {}
        for h in headers:
            for t in h.tensors:
                if t.name in self._by_name:
                    first = self.paths[self._by_name[t.name].shard]
                    raise ShardFormatError(h.path, f"tensor {t.name!r} also defined in {first}")
                self._by_name[t.name] = t

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> ShardIndex:
        """Index a shard file, or every `*.safetensors` in a directory in filename order."""
        p = Path(path)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.suffix == ".safetensors" and f.is_file())
            if not files:
                raise ShardFormatError(p, "directory holds no .safetensors shards")
        elif p.is_file():
            files = [p]
        else:
            raise ShardFormatError(p, "no such shard file or directory")
        return cls([parse_header(f, i) for i, f in enumerate(files)])

    def __len__(self) -> int:
        return len(self._by_name)

    def __getitem__(self, name: str) -> TensorEntry:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no tensor named {name!r} in {len(self.paths)} shard(s)") from None

    def get(self, name: str) -> TensorEntry | None:
        return self._by_name.get(name)
