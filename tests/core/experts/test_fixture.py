"""The fixture writer reproduces upstream's test geometry exactly, and its variants resolve.

Pins the numbers the parity battery relies on: 1,632 B per expert, data at 20,608, a 59,776-B
file, a 12,288-B stride, 8 slots at 104,448 B, the page-spanning experts and the EOF window.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from core.errors import ParamError
from core.experts import (
    K3_LAYOUT,
    BudgetTooSmall,
    ExpertCache,
    ShardIndex,
    resolve_expert,
    write_fixture,
)
from core.experts.reader import ShardFiles, plan_reads

from .conftest import (
    BUDGET_8,
    EXPERT_BYTES,
    STRIDE,
    UPSTREAM_DIR,
    UPSTREAM_FILE,
    UPSTREAM_SHA256,
    UPSTREAM_SIZE,
    Truth,
)


def test_upstream_file_is_the_pinned_copy() -> None:
    """The in-repo copy of upstream's fixture is exactly the pinned 59,776 bytes; nothing else
    lies next to it that a test could pick up instead."""
    assert UPSTREAM_FILE.is_file(), f"{UPSTREAM_FILE} is missing: the parity tests need it"
    data = UPSTREAM_FILE.read_bytes()
    assert len(data) == UPSTREAM_SIZE
    assert hashlib.sha256(data).hexdigest() == UPSTREAM_SHA256, \
        f"{UPSTREAM_FILE} changed: restore kimi-k3-in-c v1.0.0's tests/fixtures/cache copy"
    assert sorted(p.name for p in UPSTREAM_DIR.glob("*.safetensors")) == [UPSTREAM_FILE.name]
    assert UPSTREAM_SHA256 in (UPSTREAM_DIR / "README.md").read_text()


def test_k3_v1_content_is_byte_identical_to_upstream(tmp_path: Path) -> None:
    """write_fixture(content='k3-v1') writes exactly upstream's 59,776 bytes."""
    info = write_fixture(tmp_path, content="k3-v1")
    assert info.paths[0].read_bytes() == UPSTREAM_FILE.read_bytes()


def test_unique_content_keeps_upstream_header_and_geometry(k3_dir: Path) -> None:
    """Same header bytes as upstream (so every offset matches); only the payload differs."""
    ours = next(k3_dir.glob("*.safetensors")).read_bytes()
    theirs = UPSTREAM_FILE.read_bytes()
    assert len(ours) == len(theirs) == 59_776
    assert ours[:20_608] == theirs[:20_608]


def test_geometry_numbers(tmp_path: Path) -> None:
    info = write_fixture(tmp_path)
    assert (info.expert_bytes, info.data_starts, info.file_sizes) == (1_632, (20_608,), (59_776,))
    with ExpertCache(ShardIndex.open(tmp_path), 1, 24, 4, BUDGET_8) as cache:
        assert (cache.slot_bytes, cache.n_slots) == (STRIDE, 8)


@pytest.mark.parametrize("budget,slots", [(13_056, 1), (26_112, 2), (52_224, 4)])
def test_upstream_budget_search_rejects_small_budgets(k3_dir: Path, budget: int, slots: int):
    """8 x probe, then doubling: 1, 2 and 4 slots are below topk + 1 and refused."""
    with pytest.raises(BudgetTooSmall, match=rf"budget_bytes must be >= .* \({slots} slot"):
        ExpertCache(ShardIndex.open(k3_dir), 1, 24, 4, budget)


def test_content_unique_per_tensor(k3_truth: Truth) -> None:
    """All 144 tensors differ, so a wrong slot or a wrong tensor offset cannot pass."""
    digests = {
        hashlib.sha256(t.tobytes()).hexdigest()
        for e in range(24)
        for t in k3_truth.tensors(0, e)
    }
    assert len(digests) == 144


def test_upstream_content_aliases_tensors(tmp_path: Path) -> None:
    """Why the lab changes content: upstream's expert 0 and 11 share w1.packed."""
    write_fixture(tmp_path, content="k3-v1")
    truth = Truth(tmp_path)
    assert np.array_equal(truth.tensors(0, 0)[0], truth.tensors(0, 11)[0])


def test_page_spanning_experts_at_4096_chunks(k3_dir: Path) -> None:
    """Experts 2, 4, 7, 9, 12, 14, 17, 22 straddle a page: two 4096-B pieces."""
    index = ShardIndex.open(k3_dir)
    split = [e for e in range(24)
             if len(plan_reads(resolve_expert(index, K3_LAYOUT, 0, e), 4096).pieces) == 2]
    assert split == [2, 4, 7, 9, 12, 14, 17, 22]


@pytest.mark.parametrize("direct", [True, False], ids=["o_direct", "buffered"])
def test_eof_window_of_last_expert(k3_dir: Path, direct: bool) -> None:
    """Window 57,344-61,440 against EOF 59,776 returns 2,432 B = pad 800 + 1,632."""
    index = ShardIndex.open(k3_dir)
    plan = plan_reads(resolve_expert(index, K3_LAYOUT, 0, 23))
    (piece,) = plan.pieces
    assert (piece.file_off, piece.length, plan.pad) == (57_344, 4_096, 800)
    files = ShardFiles(index, direct=direct)
    buf = memoryview(bytearray(8_192) if not direct else _aligned(8_192))
    try:
        got = files.read_into(0, buf[:4096], piece.file_off, piece.aligned)
    finally:
        files.close()
    assert got == 2_432 == plan.pad + EXPERT_BYTES


def _aligned(n: int):
    import mmap

    return mmap.mmap(-1, n)


@pytest.mark.parametrize("order,contiguous", [
    ("canonical", True), ("reversed", True), ("scattered", False)])
def test_orders_resolve(tmp_path: Path, order: str, contiguous: bool) -> None:
    """Reversed experts are contiguous but not in canonical order; scattered ones are not."""
    write_fixture(tmp_path, n_experts=4, order=order)
    ref = resolve_expert(ShardIndex.open(tmp_path), K3_LAYOUT, 0, 2)
    assert ref.contiguous is contiguous and ref.nbytes == EXPERT_BYTES
    offsets = [t.offset for t in ref.tensors]
    assert (offsets == sorted(offsets)) is (order != "reversed")


def test_multi_layer_multi_shard_with_dense_layers(tmp_path: Path) -> None:
    info = write_fixture(tmp_path, n_layers=3, n_experts=5, n_shards=2, dense_layers=1)
    index = ShardIndex.open(tmp_path)
    assert len(info.paths) == 2
    assert index.get(K3_LAYOUT.name(0, 0, 0)) is None  # dense layer: no experts
    shards = {resolve_expert(index, K3_LAYOUT, L, e).shard for L in (1, 2) for e in range(5)}
    assert shards == {0, 1}


@pytest.mark.parametrize("kwargs,name", [
    ({"n_layers": 0}, "n_layers"), ({"packed_cols": 40}, "packed_cols"),
    ({"order": "random"}, "order"), ({"content": "zeros"}, "content"),
    ({"n_shards": 100}, "n_shards"), ({"dense_layers": 1}, "dense_layers")])
def test_writer_validates_parameters(tmp_path: Path, kwargs: dict, name: str) -> None:
    with pytest.raises(ParamError, match=name):
        write_fixture(tmp_path, **kwargs)
