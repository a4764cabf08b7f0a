"""Engine: prefix reuse is only correct if it equals a cold run; paging leaks nothing.

Pinned: after serving A, a prompt B sharing A's prefix reuses it and its last logits equal a
cold HybridLM.forward of B bit for bit (the reused boundary and every prefill chunk end on a
multiple of 64, where the chunked arithmetic is the same); with or without reuse generate
equals HybridLM.generate byte for byte; resuming from a partial checkpoint group (the bug
the back-off prevents) gives different logits; a request that can never fit raises OutOfPages
naming the pages and changes nothing; finished requests leave only the cache's pages.
"""

from __future__ import annotations

import pytest
import torch

from core.errors import ParamError
from core.paging.pool import OutOfPages
from core.prefix import entries as E
from core.serve import Engine
from tests.core.model.conftest import tiny_model
from tests.tolerance import EXACT, assert_close

A = (b"def load(path):\n    with open(path) as f:\n        return f.read()\n" * 12)[:700]
B = A[:512] + b"# another ending, long enough to need more than one block" * 4


def _cold(model, prompt: bytes) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.tensor([list(prompt)])).logits[0, -1]  # [V]


@pytest.fixture(scope="module")
def model():
    return tiny_model(3)


class TestReuse:
    def test_prefix_hit_equals_a_cold_run(self, model):
        eng = Engine(model, pool_pages=400)
        first = eng.prefill(A)
        assert first.reused_tokens == 0 and first.lookup.reason == E.MISS
        assert first.published_blocks == 10 and first.published_groups == 10
        hit = eng.prefill(B)
        assert hit.reused_tokens == 512 and hit.computed_tokens == len(B) - 512
        assert hit.lookup.reason == E.HIT
        assert_close(_cold(model, B), hit.last_logits, EXACT, "prefix hit vs cold")
        eng.check()

    def test_checkpoint_spacing_rounds_reuse_down(self, model):
        eng = Engine(model, pool_pages=400, checkpoint_every=3)
        eng.prefill(A)
        hit = eng.prefill(B)  # 8 blocks shared; groups at 3 and 6
        assert (hit.lookup.stage1_blocks, hit.reused_tokens) == (8, 6 * 64)
        assert hit.lookup.reason == E.NO_CHECKPOINT
        assert_close(_cold(model, B), hit.last_logits, EXACT, "spaced checkpoints")

    def test_without_reuse_generate_equals_hybridlm_generate(self, model):
        for prefix_cache in (False, True):
            eng = Engine(model, pool_pages=200, prefix_cache=prefix_cache)
            out = eng.generate(A[:300], 40)
            assert out.prefill.reused_tokens == 0
            assert out.text == model.generate(A[:300], 40)
            # the prefill emits the first byte; each decode step feeds one and emits the next
            assert [s.length for s in out.steps] == list(range(301, 340))
            eng.check()

    def test_generate_with_reuse_equals_greedy(self, model):
        eng = Engine(model, pool_pages=400)
        eng.prefill(A)
        out = eng.generate(B, 24)
        assert out.prefill.reused_tokens == 512
        assert out.text == model.generate(B, 24)


class TestPages:
    def test_finished_requests_leave_only_the_cache(self, model):
        eng = Engine(model, pool_pages=300)
        out = eng.generate(A, 20)
        assert out.pages.request_mla == model.dims.n_mla * -(-(len(A) + 20) // 64)
        used = eng.pool.num_used
        held = eng.cache.held_pages()
        assert used == sum(held.values())
        eng.check()

    def test_out_of_pages_names_the_numbers_and_changes_nothing(self, model):
        eng = Engine(model, pool_pages=60)
        eng.prefill(A[:200])
        before = (eng.pool.num_free, set(eng.cache.blocks), set(eng.cache.groups))
        with pytest.raises(OutOfPages, match=r"\d+ needed, \d+ free"):
            eng.generate(A, 4000)
        assert (eng.pool.num_free, set(eng.cache.blocks), set(eng.cache.groups)) == before
        eng.check()
        assert eng.generate(b"still serving", 3).text == model.generate(b"still serving", 3)


@pytest.mark.parametrize(("call", "name"), [
    (lambda e: e.prefill(b""), "prompt"),
    (lambda e: e.prefill("text"), "tokens"),
    (lambda e: e.generate(b"x", -1), "n_new"),
])
def test_bad_requests_name_the_field(model, call, name):
    with pytest.raises(ParamError, match=name):
        call(Engine(model, pool_pages=50))


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"pool_pages": 0}, "pool_pages"), ({"pool_pages": 9, "tokens_per_page": 0}, "tokens_per_page"),
    ({"pool_pages": 6}, r"pool_pages must be in \[7, "),  # TINY: 3 KDA layers x 2 pages + 1 MLA
    ({"pool_pages": 9, "tokens_per_page": 96}, "multiple of 64"),
    ({"pool_pages": 9, "checkpoint_every": 0}, "checkpoint_every"),
])
def test_bad_engine_knobs_name_the_field(model, kwargs, name):
    with pytest.raises(ParamError, match=name):
        Engine(model, **kwargs)


def test_shipped_model_prefix_hit_equals_cold(shipped):
    eng = Engine(shipped, pool_pages=400)
    eng.prefill(A)
    hit = eng.prefill(B)
    assert hit.reused_tokens == 512
    assert_close(_cold(shipped, B), hit.last_logits, EXACT, "shipped model")


class TestShipped:
    @staticmethod
    def _broken(model) -> Engine:
        """A engine that served A and then lost layer 0 of the checkpoint at block 8."""
        eng = Engine(model, pool_pages=400)
        eng.prefill(A)
        group = eng.cache.groups[eng.cache.hashes(A)[7]]
        eng.cache.pool.free(list(group.layers[0]))
        group.layers = (None, *group.layers[1:])
        return eng

    def test_partial_group_diverges(self, shipped):
        """The back-off exists because resuming from a group missing a layer is wrong (on the
        trained model: a random tiny model barely uses its state)."""
        safe = self._broken(shipped).prefill(B)
        assert safe.reused_tokens == 7 * 64 and safe.lookup.reason == E.PARTIAL
        assert_close(_cold(shipped, B), safe.last_logits, EXACT, "backed off")
        unsafe = self._broken(shipped).prefill(B, check_groups=False)
        assert unsafe.reused_tokens == 8 * 64
        assert (unsafe.last_logits - _cold(shipped, B)).abs().max() > 1e-2
