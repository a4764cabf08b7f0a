"""Contracts of ExpertCache beyond the counters: zero-copy views, leases, pins, batches, log.

Pins the fixes over upstream: a view stays valid until the end of the token (leases, checked
by generation), a batch never evicts its own members and reads duplicates once, publishes
sweep in disk order, and the cache works for any name template and dtype.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.numpy import save_file

from core.experts import (
    ExpertCache,
    ExpertLayout,
    ShardIndex,
    SlotsExhausted,
    StaleView,
    write_fixture,
)

from .conftest import BUDGET_8, Truth, assert_exact


def _cache(d: Path, compat=None, budget: int = BUDGET_8, **kw) -> ExpertCache:
    return ExpertCache(ShardIndex.open(d), 1, 24, 4, budget, compat=compat, **kw)


class TestViews:
    def test_zero_copy_read_only_canonical(self, k3_dir: Path) -> None:
        """Six read-only views into the arena at slot + pad + offset, in canonical order."""
        with _cache(k3_dir) as c:
            v = c.get(0, 2)
            assert v.names == ("w1p", "w1s", "w2p", "w2s", "w3p", "w3s")
            assert [a.shape for a in v.arrays] == [(8, 64), (8, 4)] * 3
            assert all(a.dtype == np.uint8 for a in v.arrays)
            arena = c._io.arena
            base = arena.__array_interface__["data"][0] + v.slot * c.slot_bytes
            pad = (20_608 + 2 * 1_632) % 4096
            assert v["w1p"].__array_interface__["data"][0] == base + pad
            assert np.shares_memory(v["w3s"], arena)
            with pytest.raises(ValueError):
                v["w1p"][0, 0] = 1
            t = v.torch()
            assert t[0].data_ptr() == base + pad and t[0].dtype == torch.uint8

    def test_slots_are_page_aligned(self, k3_dir: Path) -> None:
        with _cache(k3_dir) as c:
            assert c._io.arena.__array_interface__["data"][0] % 4096 == 0
            assert c.slot_bytes % 4096 == 0

    @pytest.mark.parametrize("order", ["canonical", "reversed", "scattered"])
    def test_orders_are_byte_exact(self, tmp_path: Path, order: str) -> None:
        write_fixture(tmp_path, n_experts=24, order=order)
        truth = Truth(tmp_path)
        with _cache(tmp_path, chunk_bytes=4096) as c:
            for i, e in enumerate(list(range(24)) * 2):
                if i % 4 == 0:
                    c.begin_layer()
                assert_exact(c.get(0, e), truth, 0, e)
            c.begin_layer()
            c.get_many(0, [20, 3, 11, 7])
            for e in (20, 3, 11, 7):
                assert_exact(c.get(0, e), truth, 0, e)

    def test_multi_layer_multi_shard_dense_first(self, tmp_path: Path) -> None:
        """The probe skips the dense layer 0; keys of layers 1-2 across 3 shards are exact."""
        write_fixture(tmp_path, n_layers=3, n_experts=8, n_shards=3, dense_layers=1)
        truth = Truth(tmp_path)
        with ExpertCache(ShardIndex.open(tmp_path), 3, 8, 4, 6 * 12_288) as c:
            for i, (L, e) in enumerate([(1, 0), (2, 7), (1, 5), (2, 0), (1, 7), (2, 3), (1, 1)]):
                if i % 4 == 0:
                    c.begin_layer()
                assert_exact(c.get(L, e), truth, L, e)
            c.begin_layer()
            assert c.get_many(2, [1, 2, 4, 5]) == 4
            for e in (1, 2, 4, 5):
                assert_exact(c.get(2, e), truth, 2, e)

    @pytest.mark.parametrize("direct", [True, False], ids=["o_direct", "buffered"])
    def test_direct_and_buffered_share_layout(self, k3_dir: Path, direct: bool) -> None:
        with _cache(k3_dir, direct_io=direct) as c:
            assert c.direct_io is direct
            views = [c.get(0, e) for e in (0, 22, 23)]
            pads = [v["w1p"].__array_interface__["data"][0] % 4096 for v in views]
            assert pads == [128, (20_608 + 22 * 1_632) % 4096, 800]
            assert c.stats().device_bytes == 4_096 + 6_528 + 2_432


def _custom_checkpoint(d: Path, dtype: str) -> ExpertLayout:
    """A tiny-model style checkpoint: 3 float matrices per expert, another name template."""
    rng = np.random.default_rng(0)
    tensors = {}
    for L in range(2):
        for e in range(4):
            for w, shape in (("gate_proj", (16, 8)), ("up_proj", (16, 8)), ("down_proj", (8, 16))):
                x = rng.standard_normal(shape).astype(np.float32)
                tensors[f"model.layers.{L}.mlp.experts.{e}.{w}.weight"] = x
    if dtype == "BF16":
        import safetensors.torch

        safetensors.torch.save_file({k: torch.from_numpy(v).to(torch.bfloat16)
                                     for k, v in tensors.items()}, str(d / "m.safetensors"))
    else:
        save_file(tensors, str(d / "m.safetensors"))
    return ExpertLayout(
        template="model.layers.{layer}.mlp.experts.{expert}.{w}.{part}",
        parts=(("gate_proj", "weight"), ("up_proj", "weight"), ("down_proj", "weight")),
        short_names=("gate", "up", "down"), mxfp4=False,
    )


@pytest.mark.parametrize("dtype", ["F32", "BF16"])
def test_other_template_and_dtype(tmp_path: Path, dtype: str) -> None:
    """The template and layout are constructor parameters; nothing assumes U8."""
    layout = _custom_checkpoint(tmp_path, dtype)
    with ExpertCache(ShardIndex.open(tmp_path), 2, 4, 2, 1 << 16, layout=layout) as c, \
            safe_open(str(tmp_path / "m.safetensors"), framework="pt") as f:
        for L, e in [(0, 0), (1, 3), (0, 2), (1, 1)]:
            v = c.get(L, e)
            for i, t in enumerate(v.torch()):
                ref = f.get_tensor(layout.name(L, e, i))
                assert t.dtype == ref.dtype and torch.equal(t, ref)
            if dtype == "F32":
                assert v["down"].dtype == np.float32 and v["down"].shape == (8, 16)


def test_name_template_parameter(tmp_path: Path) -> None:
    """name_template alone swaps the naming and keeps the K3 tensor list."""
    write_fixture(tmp_path, n_experts=6)
    index = ShardIndex.open(tmp_path)
    with pytest.raises(Exception, match="no tensor"):
        ExpertCache(index, 1, 6, 2, 1 << 20, name_template="x.{layer}.{expert}.{w}.{part}")


class TestLeases:
    def test_views_stay_valid_until_begin_layer(self, k3_dir: Path) -> None:
        """A view outlives many more than topk gets; begin_layer alone releases it."""
        with _cache(k3_dir) as c:  # 8 slots, topk 4
            views = [c.get(0, e) for e in range(7)]  # 6 more gets than the first view needed
            views.append(c.get(0, 0))  # a hit on a leased slot adds no lease
            assert all(v.valid() for v in views) and c.stats().leased == 7
            c.warm(0, 20)  # fills the one free slot; warm leases nothing
            views.append(c.get(0, 20))  # now every slot is leased
            assert c.stats().leased == 8
            assert c.get_many(0, [21, 22]) == 0 and c.stats().prefetch_skipped == 2
            with pytest.raises(SlotsExhausted):
                c.warm(0, 23)  # neither a batch nor a warm takes a leased slot
            before = c.snapshot()
            with pytest.raises(SlotsExhausted, match="leased"):
                c.get(0, 8)  # no victim: a counted drop that changes no slot
            assert c.snapshot().slots == before.slots
            s = c.stats()
            assert (s.drops, s.leased, s.evictions) == (1, 8, 0)
            assert all(v.check() is v for v in views)
            c.begin_layer()
            assert c.stats().leased == 0
            c.get(0, 8)  # evicts the least recently used: expert 1
            assert not views[1].valid()
            with pytest.raises(StaleView, match="layer 0 expert 1 is stale"):
                views[1].check()

    def test_leases_shrink_a_batch_instead_of_breaking_views(self, k3_dir: Path) -> None:
        with _cache(k3_dir, budget=5 * 12_288) as c:
            views = [c.get(0, e) for e in range(4)]
            assert c.get_many(0, [10, 11, 12, 13]) == 1
            assert c.stats().prefetch_skipped == 3
            assert all(v.valid() for v in views)

    @pytest.mark.parametrize(("ids", "published", "skipped"), [
        ([10, 11, 11, 12], 1, 2),  # the duplicate 11 is one expert left unread
        ([10, 11, 0, 1], 1, 1),  # 0 and 1 are resident: nothing of them went unread
        ([0, 10, 11, 10, 1, 11, 12], 1, 2),  # both at once, resident members first
    ])
    def test_prefetch_skipped_counts_distinct_unread_experts(
            self, k3_dir: Path, ids: list[int], published: int, skipped: int) -> None:
        """Five slots, four leased by get(0..3): only one is free for the batch."""
        with _cache(k3_dir, budget=5 * 12_288) as c:
            for e in range(4):
                c.get(0, e)
            assert c.get_many(0, ids) == published
            s = c.stats()
            assert s.prefetch_skipped == skipped
            unread = {e for e in ids if c.resident(0, e) is None}
            assert len(unread) == skipped

    def test_compat_has_no_leases(self, k3_dir: Path) -> None:
        with _cache(k3_dir, compat="k3-v1", budget=5 * 12_288) as c:
            views = [c.get(0, e) for e in range(4)]
            assert c.get_many(0, [10, 11, 12, 13]) == 4  # 1 empty slot + 3 leased-in-spirit
            assert [v.valid() for v in views] == [False, False, False, True]


class TestPinsAndBatches:
    def test_pinned_expert_survives_thrash(self, k3_dir: Path, k3_truth: Truth) -> None:
        with _cache(k3_dir) as c:
            c.get(0, 3)
            assert c.pin(0, 3, True) is True and c.pin(0, 3, True) is False
            for i, e in enumerate(list(range(24)) * 2):
                if i % 4 == 0:
                    c.begin_layer()
                c.get(0, e)
            assert_exact(c.resident(0, 3), k3_truth, 0, 3)
            assert c.pin(0, 3, False) is True
            for e in range(4, 24):
                if e % 4 == 0:
                    c.begin_layer()
                c.get(0, e)
            assert c.resident(0, 3) is None

    def test_duplicates_read_once_and_publish_in_disk_order(self, k3_dir: Path) -> None:
        with _cache(k3_dir) as c:
            seq = c.events()[-1].seq if c.events() else 0
            assert c.get_many(0, [9, 5, 9, 7, 5, 9]) == 3
            ev = c.events(seq)
            assert [e.expert for e in ev if e.op == "reserve"] == [9, 5, 7]
            assert [e.expert for e in ev if e.op == "publish"] == [5, 7, 9]
            assert c.stats().prefetch_reads == 3

    def test_resident_members_are_untouched(self, k3_dir: Path) -> None:
        with _cache(k3_dir) as c:
            c.get(0, 1)
            assert c.get_many(0, [1, 2]) == 1
            assert c.stats().prefetch_reads == 1

    def test_resident_has_no_side_effects(self, k3_dir: Path) -> None:
        with _cache(k3_dir) as c:
            c.get(0, 1)
            before = (c.snapshot(), c.trace().tolist(), c.hist().tolist(), c.stats())
            assert c.resident(0, 1).expert == 1 and c.resident(0, 2) is None
            after = (c.snapshot(), c.trace().tolist(), c.hist().tolist(), c.stats())
            assert after == before

    def test_trace_and_hist_record_gets_only(self, k3_dir: Path) -> None:
        with _cache(k3_dir) as c:
            c.get_many(0, [4, 5])
            c.warm(0, 6)
            for e in (5, 4, 5):
                c.get(0, e)
            assert c.trace().tolist() == [[0, 5], [0, 4], [0, 5]]
            assert c.trace().dtype == np.int32
            assert c.hist()[0, 5] == 2 and c.hist().sum() == 3

    def test_event_log_is_bounded_and_ordered(self, k3_dir: Path) -> None:
        with _cache(k3_dir, log_capacity=16) as c:
            c.get(0, 0)
            ops = [e.op for e in c.events()]
            assert ops == ["miss", "reserve", "read_done", "publish"]
            for e in range(24):
                if e % 4 == 0:
                    c.begin_layer()
                c.get(0, e)
            ev = c.events()
            assert len(ev) == 16
            assert [e.seq for e in ev] == list(range(ev[0].seq, ev[0].seq + 16))
            snap = c.snapshot()
            assert snap.seq == ev[-1].seq and len(snap.slots) == 8
            assert sorted(e for _, e in snap.resident()) == list(range(16, 24))
            with pytest.raises(AttributeError):
                snap.seq = 0  # frozen

    def test_compat_drop_when_everything_pinned_via_batch(self, k3_dir: Path) -> None:
        with _cache(k3_dir, compat="k3-v1") as c:
            c.get_many(0, list(range(8)))
            for e in range(8):
                c.pin(0, e, True)
            with pytest.raises(SlotsExhausted):
                c.warm(0, 20)
            assert c.stats().drops == 0 and c.stats().prefetch_skipped == 1


def test_closed_cache_serves_hits_but_reads_nothing(k3_dir: Path) -> None:
    c = _cache(k3_dir)
    c.get(0, 1)
    c.close()
    c.close()  # idempotent
    assert c.get(0, 1).expert == 1
    with pytest.raises(Exception, match="closed"):
        c.get(0, 2)
    with pytest.raises(Exception, match="closed"):
        c.get_many(0, [3])
    assert c.stats().inflight == 0
