"""Faults: short reads never publish, failed reservations are released, bad input changes nothing.

The truncation is real (a disposable copy of the shard, cut after it was indexed), as in the
seed's probe; the short middle chunk is injected, because a real file only ever comes up
short at its end.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from core.errors import ParamError
from core.experts import (
    K3_LAYOUT,
    ExpertCache,
    ExpertLoadError,
    NotResident,
    ShardIndex,
    SlotsExhausted,
    invariant_errors,
    write_fixture,
)
from core.experts.reader import plan_reads, sum_complete

from .conftest import BUDGET_8, Truth, assert_exact

BOTH = pytest.mark.parametrize("compat", ["k3-v1", None], ids=["compat", "fixed"])
EXPERT_20 = 20_608 + 20 * 1_632  # 53,248


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir(exist_ok=True)
    for f in src.glob("*.safetensors"):
        shutil.copy(f, dst / f.name)
    return dst


def _no_inflight(c: ExpertCache) -> None:
    assert all(x.state != "INFLIGHT" for x in c.snapshot().slots)
    assert c.stats().inflight == 0


@BOTH
@pytest.mark.parametrize("cut", [EXPERT_20, EXPERT_20 + 800], ids=["at_20", "inside_20"])
def test_truncated_shard_batch_publishes_nothing(
    tmp_path: Path, k3_dir: Path, k3_truth: Truth, compat, cut: int
) -> None:
    """Batch 20..23 publishes 0, nothing stays INFLIGHT, get(23) fails as a miss, 0 survives."""
    d = _copy(k3_dir, tmp_path / "copy")
    with ExpertCache(ShardIndex.open(d), 1, 24, 4, BUDGET_8, compat=compat) as c:
        c.get(0, 0)
        os.truncate(next(d.glob("*.safetensors")), cut)
        assert c.get_many(0, [20, 21, 22, 23]) == 0
        _no_inflight(c)
        assert all(c.resident(0, e) is None for e in (20, 21, 22, 23))
        with pytest.raises(ExpertLoadError, match="expert 23"):
            c.get(0, 23)
        _no_inflight(c)
        assert_exact(c.resident(0, 0), k3_truth, 0, 0)
        s = c.stats()
        assert (s.misses, s.hits, s.prefetch_reads, s.evictions) == (2, 0, 0, 0)
        assert (s.bytes_read, s.device_bytes) == (1_632, 4_096)  # expert 0 only
        assert s.failed_reads == 5
        assert invariant_errors(s) == []


@BOTH
def test_half_expert_truncation_fails_alone(tmp_path: Path, k3_dir: Path, k3_truth: Truth,
                                            compat) -> None:
    """Cut half of expert 23 away: 20, 21, 22 publish byte-exact, 23 alone fails."""
    d = _copy(k3_dir, tmp_path / "copy")
    with ExpertCache(ShardIndex.open(d), 1, 24, 4, BUDGET_8, compat=compat) as c:
        os.truncate(next(d.glob("*.safetensors")), 59_776 - 816)
        assert c.get_many(0, [20, 21, 22, 23]) == 3
        for e in (20, 21, 22):
            assert_exact(c.resident(0, e), k3_truth, 0, e)
        assert c.resident(0, 23) is None
        _no_inflight(c)


def test_failed_read_evicts_an_innocent_owner_only_in_compat(tmp_path: Path, k3_dir: Path):
    """Upstream evicts before reading (quirk 4); the fixed mode checks the shard first."""
    for compat, evictions in (("k3-v1", 1), (None, 0)):
        d = _copy(k3_dir, tmp_path / f"copy-{compat}")
        with ExpertCache(ShardIndex.open(d), 1, 24, 4, BUDGET_8, compat=compat) as c:
            for e in range(8):
                c.get(0, e)
            os.truncate(next(d.glob("*.safetensors")), EXPERT_20)
            with pytest.raises(ExpertLoadError):
                c.get(0, 23)
            s = c.stats()
            assert (s.evictions, s.resident) == (evictions, 8 - evictions)
            _no_inflight(c)


def _multi_page_fixture(d: Path) -> Path:
    write_fixture(d, n_experts=6, packed_cols=512)  # 13,056 B experts: 4-5 pages each
    return d


def _short_middle_piece(monkeypatch, cache: ExpertCache, expert: int, short_by: int) -> None:
    """Make the read of `expert`'s second 4096-B piece come up `short_by` bytes short."""
    ref = cache._io.ref(0, expert)
    target = plan_reads(ref, 4096).pieces[1].file_off
    files = cache._io.files
    real = files.read_into

    def read_into(shard: int, dest: memoryview, file_off: int, aligned: bool) -> int:
        if file_off == target:
            return max(0, real(shard, dest[: len(dest) - short_by], file_off, False))
        return real(shard, dest, file_off, aligned)

    monkeypatch.setattr(files, "read_into", read_into)


@BOTH
def test_short_middle_chunk_never_publishes(tmp_path: Path, monkeypatch, compat) -> None:
    """A chunk short by 100 B mid-expert: the sum check would pass, the per-chunk check fails."""
    d = _multi_page_fixture(tmp_path / "big")
    truth = Truth(d)
    with ExpertCache(ShardIndex.open(d), 1, 6, 2, 3 * 24_576, compat=compat,
                     chunk_bytes=4096) as c:
        plan = plan_reads(c._io.ref(0, 3), 4096)
        assert len(plan.pieces) >= 4
        got = [p.length for p in plan.pieces]
        got[1] -= 100
        assert sum_complete(plan, got)  # upstream's check is fooled by the tail padding
        _short_middle_piece(monkeypatch, c, 3, 100)
        assert c.get_many(0, [2, 3]) == 1
        assert c.resident(0, 3) is None and c.resident(0, 2) is not None
        _no_inflight(c)
        with pytest.raises(ExpertLoadError, match="short read"):
            c.get(0, 3)
        _no_inflight(c)
        monkeypatch.undo()
        assert_exact(c.get(0, 3), truth, 0, 3)
        s = c.stats()
        assert (s.prefetch_reads, s.failed_reads, s.misses) == (1, 2, 2)
        assert invariant_errors(s) == []


def _state(c: ExpertCache):
    """Everything a call could change (stats compare without their timings)."""
    return c.snapshot(), c.stats(), c.trace().tolist()


@BOTH
def test_bad_ids_raise_and_change_nothing(k3_dir: Path, compat) -> None:
    with ExpertCache(ShardIndex.open(k3_dir), 1, 24, 4, BUDGET_8, compat=compat) as c:
        c.get(0, 1)
        before = _state(c)
        for call, name in [
            (lambda: c.get(0, 24), "expert"), (lambda: c.get(1, 0), "layer"),
            (lambda: c.get(-1, 0), "layer"), (lambda: c.get(0, True), "expert"),
            (lambda: c.get(0, 1.5), "expert"), (lambda: c.get_many(0, [1.5]), r"ids\[\]"),
            (lambda: c.get_many(0, [True]), r"ids\[\]"), (lambda: c.get_many(0.5, [0]), "layer"),
            (lambda: c.warm(0, 99), "expert"), (lambda: c.pin(0, 99, True), "expert"),
            (lambda: c.resident(3, 0), "layer"), (lambda: c.events(-1), "since"),
        ] + ([] if compat else [  # compat skips these silently, as upstream (next test)
            (lambda: c.get_many(0, [0, 24]), r"ids\[\]"), (lambda: c.get_many(0, [-1]), r"ids"),
            (lambda: c.get_many(2, [0]), "layer"), (lambda: c.get_many(0, [0] * 65), "len"),
        ]):
            with pytest.raises(ParamError, match=name):
                call()
        with pytest.raises(NotResident, match="expert 7 is not resident"):
            c.pin(0, 7, True)
        assert _state(c) == before
        assert c.get(np.int64(0), np.int32(1)).expert == 1  # numpy integers are fine


def test_compat_batch_skips_bad_ids_like_upstream(k3_dir: Path) -> None:
    """k3-v1 getmany: out-of-range ids and layers skipped silently, counted outside upstream's."""
    with ExpertCache(ShardIndex.open(k3_dir), 1, 24, 4, BUDGET_8, compat="k3-v1") as c:
        c.get(0, 1)
        assert c.get_many(0, [0, 24, -1, 1, 2, 99]) == 2  # 0 and 2 read; 1 resident
        s = c.stats()
        assert (s.prefetch_reads, s.batch_ids_dropped, s.prefetch_skipped) == (2, 3, 0)
        assert (s.hits, s.misses, s.failed_reads) == (0, 1, 0)  # upstream counters
        before = _state(c)
        assert c.get_many(1, [3, 4]) == 0 and c.get_many(-1, [3]) == 0
        assert c.get_many(0, [24] * 70) == 0  # more than 64 ids is no error either
        snap, stats, trace = _state(c)
        assert stats.batch_ids_dropped == 3 + 2 + 1 + 70
        assert (snap, replace(stats, batch_ids_dropped=3), trace) == before  # nothing else moved
        assert c.resident(0, 3) is None and c.resident(0, 4) is None


def test_compat_batch_stops_after_64_reservations(tmp_path: Path) -> None:
    """Upstream reserves at most K3_MAX_TOPK = 64 per getmany; the rest is dropped unread."""
    write_fixture(tmp_path, n_experts=70)
    index = ShardIndex.open(tmp_path)
    with ExpertCache(index, 1, 70, 4, 68 * 12_288, compat="k3-v1") as c:
        assert c.n_slots == 68
        assert c.get_many(0, [0, 0, *range(70)]) == 64  # the duplicate does not use a place
        s = c.stats()
        assert (s.prefetch_reads, s.batch_ids_dropped, s.prefetch_skipped) == (64, 6, 0)
        assert c.resident(0, 63) is not None and c.resident(0, 64) is None
    with ExpertCache(index, 1, 70, 4, 68 * 12_288) as c, \
            pytest.raises(ParamError, match="len"):
        c.get_many(0, list(range(65)))  # fixed mode refuses instead


@BOTH
def test_nothing_evictable_is_a_counted_drop(k3_dir: Path, compat) -> None:
    """Compat lets every slot be pinned; get() then drops. Fixed refuses the pins first."""
    with ExpertCache(ShardIndex.open(k3_dir), 1, 24, 4, BUDGET_8, compat=compat) as c:
        for e in range(8):
            c.get(0, e)
        if compat is None:
            for e in range(3):
                assert c.pin(0, e, True) is True
            with pytest.raises(ParamError, match="at most n_slots - topk - 1 = 3"):
                c.pin(0, 3, True)
            return
        for e in range(8):
            c.pin(0, e, True)
        before = c.snapshot()
        with pytest.raises(SlotsExhausted):
            c.get(0, 9)
        assert c.snapshot().slots == before.slots
        s = c.stats()
        assert (s.drops, s.misses, s.evictions) == (1, 9, 0)
        assert c.get_many(0, [9, 10]) == 0 and c.stats().prefetch_skipped == 2


def test_missing_oversize_and_split_experts(tmp_path: Path) -> None:
    """Unresolvable experts fail at get() with a clear message and evict nothing."""
    def k3(L: int, e: int, rows: int) -> dict[str, np.ndarray]:
        shapes = [(rows, 64), (rows, 4)] * 3
        return {K3_LAYOUT.name(L, e, i): np.full(s, e, np.uint8) for i, s in enumerate(shapes)}

    save_file({**k3(0, 0, 8), **k3(0, 1, 64)}, str(tmp_path / "a.safetensors"))
    split = k3(0, 2, 8)
    names = sorted(split)
    save_file({n: split[n] for n in names[:3]}, str(tmp_path / "b.safetensors"))
    save_file({n: split[n] for n in names[3:]}, str(tmp_path / "c.safetensors"))
    with ExpertCache(ShardIndex.open(tmp_path), 1, 4, 2, 3 * 12_288) as c:
        c.get(0, 0)
        for e, msg in [(1, r"needs \d+ B, slot is 12288 B"), (2, "span shards"),
                       (3, "no tensor")]:
            with pytest.raises(ExpertLoadError, match=msg):
                c.get(0, e)
        s = c.stats()
        assert (s.misses, s.failed_reads, s.evictions, s.resident) == (4, 3, 0, 1)


def test_no_expert_zero_anywhere_fails_init(tmp_path: Path) -> None:
    save_file({"x": np.zeros(4, np.uint8)}, str(tmp_path / "a.safetensors"))
    with pytest.raises(ExpertLoadError, match="no layer resolves expert 0"):
        ExpertCache(ShardIndex.open(tmp_path), 2, 4, 2, 1 << 20)


@pytest.mark.parametrize("kwargs,name", [
    ({"n_layers": 0}, "n_layers"), ({"topk": 0}, "topk"), ({"topk": 25}, "topk"),
    ({"compat": "k3"}, "compat"), ({"chunk_bytes": 100}, "chunk_bytes"),
    ({"budget_bytes": 0}, "budget_bytes"),
    ({"index": "dir"}, "index")])
def test_constructor_validates(k3_dir: Path, kwargs: dict, name: str) -> None:
    args = {"index": ShardIndex.open(k3_dir), "n_layers": 1, "n_experts": 24, "topk": 4,
            "budget_bytes": BUDGET_8, **kwargs}
    with pytest.raises(ParamError, match=name):
        ExpertCache(**args)
