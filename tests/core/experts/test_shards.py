"""ShardIndex parses safetensors headers itself; safe_open is the independent ground truth.

Pins: offsets relative to the end of the header, dtype size x numel == span, spans inside the
file, unique names, shards in filename order, and a clear ShardFormatError for each defect.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open

from core.experts import ShardFormatError, ShardIndex, write_fixture

from .conftest import UPSTREAM_FILE


def _write_raw(path: Path, header: bytes | dict, data: bytes = b"", length: int | None = None):
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    n = len(raw) if length is None else length
    path.write_bytes(struct.pack("<Q", n) + raw + data)
    return path


def _entry(off: int, n: int, dtype: str = "U8", shape: list[int] | None = None) -> dict:
    return {"dtype": dtype, "shape": shape if shape is not None else [n],
            "data_offsets": [off, off + n]}


def _assert_matches_safe_open(index: ShardIndex) -> None:
    for path in index.paths:
        with safe_open(str(path), framework="numpy") as f, open(path, "rb") as raw:
            for name in f.keys():
                t = index[name]
                assert index.paths[t.shard] == path
                ref = f.get_tensor(name)
                assert t.shape == ref.shape
                raw.seek(t.offset)
                assert raw.read(t.nbytes) == ref.tobytes(), name


class TestIndex:
    def test_upstream_file_geometry(self) -> None:
        """The upstream fixture: 144 tensors, header 20,600 B, data at 20,608, 59,776 B."""
        index = ShardIndex.open(UPSTREAM_FILE)
        h = index.headers[0]
        assert (len(index), h.data_start, h.file_size) == (144, 20_608, 59_776)
        _assert_matches_safe_open(index)

    def test_multi_shard_directory_matches_safe_open(self, tmp_path: Path) -> None:
        """Offsets of every tensor in a 3-shard, 2-layer fixture equal safe_open's bytes."""
        write_fixture(tmp_path, n_layers=2, n_experts=6, n_shards=3, order="scattered")
        index = ShardIndex.open(tmp_path)
        assert len(index.paths) == 3 and len(index) == 2 * 6 * 6
        _assert_matches_safe_open(index)

    def test_shards_in_filename_order(self, tmp_path: Path) -> None:
        """Shard numbers follow sorted file names, not directory listing order."""
        write_fixture(tmp_path, n_experts=4, n_shards=4)
        index = ShardIndex.open(tmp_path)
        assert list(index.paths) == sorted(index.paths)
        assert [index[name].shard for name in _first_names(index)] == [0, 1, 2, 3]

    def test_metadata_and_non_u8_dtypes(self, tmp_path: Path) -> None:
        """__metadata__ is skipped; F32 and BF16 spans are checked with their element size."""
        from safetensors.numpy import save_file

        save_file({"a": np.arange(6, dtype=np.float32).reshape(2, 3),
                   "b": np.zeros((4,), np.int64)}, str(tmp_path / "m.safetensors"),
                  metadata={"format": "np"})
        index = ShardIndex.open(tmp_path / "m.safetensors")
        assert index["a"].nbytes == 24 and index["b"].nbytes == 32
        _assert_matches_safe_open(index)

    def test_unknown_name_is_a_clear_key_error(self, k3_dir: Path) -> None:
        with pytest.raises(KeyError, match="no tensor named 'nope'"):
            ShardIndex.open(k3_dir)["nope"]


def _first_names(index: ShardIndex) -> list[str]:
    return [h.tensors[0].name for h in index.headers]


GOOD = {"t": _entry(0, 8)}
CORRUPT = [
    ("short_file", None, b"\x01\x02", "shorter than the 8-byte length"),
    ("huge_length", GOOD, b"\0" * 8, "header length"),
    ("not_utf8", b"\xff\xfe{}", b"", "not UTF-8"),
    ("not_json", b'{"t": ', b"", "not valid JSON"),
    ("array", b"[1, 2]", b"", "not an object"),
    ("entry_not_object", {"t": 3}, b"", "entry 't' is not an object"),
    ("missing_key", {"t": {"dtype": "U8", "shape": [8]}}, b"\0" * 8, "lacks ['data_offsets']"),
    ("bad_dtype", {"t": _entry(0, 8, dtype="Q7")}, b"\0" * 8, "unsupported dtype 'Q7'"),
    ("bad_shape", {"t": _entry(0, 8, shape=[-8])}, b"\0" * 8, "bad shape"),
    ("offsets_reversed", {"t": {"dtype": "U8", "shape": [0], "data_offsets": [8, 0]}},
     b"\0" * 8, "out of order"),
    ("span_mismatch", {"t": _entry(0, 8, dtype="F32", shape=[8])}, b"\0" * 8,
     "span 8 B != F32 size x numel = 32 B"),
    ("past_eof", {"t": _entry(0, 64)}, b"\0" * 8, "past end of file"),
    ("overlap", {"a": _entry(0, 8), "b": _entry(4, 8)}, b"\0" * 16, "overlap"),
    ("duplicate_name", b'{"t": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}, '
     b'"t": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}}', b"\0\0", "duplicate key 't'"),
    ("bad_metadata", {"__metadata__": {"k": 1}, **GOOD}, b"\0" * 8, "__metadata__"),
]


@pytest.mark.parametrize("case,header,data,problem", CORRUPT, ids=[c[0] for c in CORRUPT])
def test_corrupt_header_raises_naming_file_and_problem(
    tmp_path: Path, case: str, header, data: bytes, problem: str
) -> None:
    """Each malformed header raises ShardFormatError with the file name and the defect."""
    path = tmp_path / f"{case}.safetensors"
    if header is None:
        path.write_bytes(data)
    elif case == "huge_length":
        _write_raw(path, header, data, length=1 << 40)
    else:
        _write_raw(path, header, data)
    with pytest.raises(ShardFormatError) as err:
        ShardIndex.open(path)
    assert path.name in str(err.value) and problem in str(err.value)


def test_header_truncated_inside_json(tmp_path: Path, k3_dir: Path) -> None:
    """A shard cut inside its header: the stated length runs past the end of the file."""
    src = next(k3_dir.glob("*.safetensors")).read_bytes()
    path = tmp_path / "cut.safetensors"
    path.write_bytes(src[:5_000])
    with pytest.raises(ShardFormatError, match="runs past end of file"):
        ShardIndex.open(path)


def test_truncated_data_is_caught_at_open(tmp_path: Path, k3_dir: Path) -> None:
    """A shard cut inside its data: the first tensor past EOF is named."""
    src = next(k3_dir.glob("*.safetensors")).read_bytes()
    path = tmp_path / "cut.safetensors"
    path.write_bytes(src[:53_248])
    with pytest.raises(ShardFormatError, match=r"experts\.20\.w1\.weight_packed' ends at"):
        ShardIndex.open(path)


def test_duplicate_across_shards_names_both_files(tmp_path: Path) -> None:
    _write_raw(tmp_path / "a.safetensors", GOOD, b"\0" * 8)
    _write_raw(tmp_path / "b.safetensors", GOOD, b"\0" * 8)
    with pytest.raises(ShardFormatError, match=r"b\.safetensors: tensor 't' also defined in .*a"):
        ShardIndex.open(tmp_path)


def test_missing_and_empty_paths(tmp_path: Path) -> None:
    with pytest.raises(ShardFormatError, match="holds no .safetensors shards"):
        ShardIndex.open(tmp_path)
    with pytest.raises(ShardFormatError, match="no such shard"):
        ShardIndex.open(tmp_path / "absent.safetensors")
