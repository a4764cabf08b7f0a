"""Prefix-cache scenarios and the spacing sweep, on a real Engine.

Pinned: every preset's safe path equals a cold HybridLM.forward of its request (FP32_DECODE);
hit reuses the deepest multiple of k at or below the 8 shared blocks; miss reuses nothing;
fallback evicts (tail first) until the group the request needed is gone and resumes from the
previous one, with reason "evicted"; partial backs off past the broken group while
check_groups=False resumes from it, and on the shipped model its logits leave the cold run's;
forks never change the engine they copy; the sweep's staircase is P * k * floor(floor(s / P) / k)
and its groups hold n_kda * pages_per_layer * floor(blocks / k) pages.
"""

from __future__ import annotations

import pytest

from core.errors import ParamError
from core.experiments.prefix import fork, run_preset, serve_cached, time_saved
from core.experiments.prefix_spacing import probe, spacing_sweep
from core.experiments.scenes import CACHED, DOCUMENT, PRESETS, REQUEST
from core.paging.pool import PageKind
from core.prefix import entries as E
from core.tolerances import FP32_DECODE_MAX_ABS
from tests.core.model.conftest import tiny_model

P = 64
SHARED_BLOCKS = len(DOCUMENT) // P  # 8


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def model():
    return tiny_model(5)


@pytest.fixture(scope="module")
def bases(model):
    return {k: serve_cached(model, k) for k in (1, 3, 8)}


def _digests(eng):
    return set(eng.cache.blocks), set(eng.cache.groups), eng.pool.num_free


@pytest.mark.parametrize("k", [1, 3, 8])
@pytest.mark.parametrize("preset", PRESETS)
def test_every_safe_path_equals_a_cold_run(model, bases, preset, k):
    before = _digests(bases[k])
    r = run_preset(model, preset, k, bases[k])
    assert r.max_abs_safe <= FP32_DECODE_MAX_ABS
    assert r.reused_tokens + r.computed_tokens == r.request_tokens
    assert _digests(bases[k]) == before, "a scenario changed the engine it forked"
    bases[k].check()


@pytest.mark.parametrize("k", [1, 3, 8])
def test_hit_reuses_the_deepest_group_on_the_grid(model, bases, k):
    r = run_preset(model, "hit", k, bases[k])
    want = SHARED_BLOCKS // k * k
    assert (r.lookup.stage1_blocks, r.lookup.boundary_blocks) == (SHARED_BLOCKS, want)
    assert r.reused_tokens == want * P
    assert r.lookup.reason == (E.HIT if want == SHARED_BLOCKS else E.NO_CHECKPOINT)
    assert r.cached.stage1_blocks == r.cached_full_blocks == len(CACHED) // P


def test_miss_reuses_nothing(model, bases):
    r = run_preset(model, "miss", 1, bases[1])
    assert (r.lookup.stage1_blocks, r.reused_tokens, r.lookup.reason) == (0, 0, E.MISS)
    assert r.max_abs_safe == 0.0  # no reuse: the engine's forward is the cold forward


@pytest.mark.parametrize(("k", "resume"), [(1, 7), (3, 3), (8, 0)])
def test_fallback_resumes_from_the_previous_group(model, bases, k, resume):
    r = run_preset(model, "fallback", k, bases[k])
    assert r.lookup.reason == E.EVICTED and r.lookup.boundary_blocks == resume
    assert r.evicted_entries > 0
    deepest = r.lookup.stage1_blocks // k * k
    assert r.lookup.boundary_status[deepest - 1] == E.EVICTED


@pytest.mark.parametrize(("k", "safe", "unsafe"), [(1, 7, 8), (3, 3, 6), (8, 0, 8)])
def test_partial_backs_off_safely_and_unsafe_uses_it(model, bases, k, safe, unsafe):
    r = run_preset(model, "partial", k, bases[k])
    assert r.lookup.boundary_blocks == safe and r.unsafe.boundary_blocks == unsafe
    assert r.lookup.boundary_status[unsafe - 1] == E.PARTIAL
    assert r.unsafe_reused_tokens == unsafe * P
    assert r.group_pages == bases[k].cache.held_pages()[PageKind.KDA_STATE] - \
        bases[k].cache.geometry.kda_pages_per_layer  # one layer's pages were lost


def test_partial_group_diverges_on_the_shipped_model(shipped):
    """The back-off exists because resuming from a partial group is wrong (the trained model
    uses its state; a random tiny one barely does)."""
    r = run_preset(shipped, "partial", 1)
    assert r.max_abs_safe <= FP32_DECODE_MAX_ABS
    assert r.max_abs_unsafe > 1e-3


def test_fork_is_independent(model, bases):
    f = fork(bases[1])
    f.prefill(REQUEST)
    assert f.model is bases[1].model
    assert set(f.cache.blocks) > set(bases[1].cache.blocks)
    f.check()
    bases[1].check()


def test_time_saved_reports_the_hit_preset(model, bases):
    t = time_saved(model, "hit", bases[1], repeat=1)
    assert t.cold_seconds > 0 and t.reuse_seconds > 0 and t.repeat == 1
    assert (t.reused_tokens, t.computed_tokens) == (SHARED_BLOCKS * P, len(REQUEST) - 512)


def test_bad_input_names_the_parameter(model, bases):
    with pytest.raises(ParamError, match="preset"):
        run_preset(model, "nope", 1, bases[1])
    with pytest.raises(ParamError, match="checkpoint_every"):
        run_preset(model, "hit", 2, bases[1])  # the base serves k = 1
    with pytest.raises(ParamError, match="step"):
        spacing_sweep([bases[1]], CACHED, step=0)


class TestSweep:
    @pytest.fixture(scope="class")
    def sweep(self, bases):
        return spacing_sweep([bases[k] for k in (1, 3, 8)], CACHED, step=4)

    def test_probes_diverge_right_after_the_shared_prefix(self):
        for s in (0, 63, 64, 500, len(CACHED)):
            p = probe(CACHED, s)
            assert p[:s] == CACHED[:s] and len(p) == s + 1
            assert s == len(CACHED) or p[s] != CACHED[s]

    def test_staircase_is_the_grid_rule(self, sweep):
        for pt in sweep.points:
            k = pt.checkpoint_every
            for s, matched, reusable in zip(sweep.shared, pt.matched, pt.reusable, strict=True):
                assert matched == s // P * P
                assert reusable == s // P // k * k * P, (k, s)

    def test_groups_cost_pages_per_retained_boundary(self, sweep, bases):
        per_group = bases[1].cache.geometry.kda_pages
        blocks = len(CACHED) // P
        for pt in sweep.points:
            assert pt.groups == blocks // pt.checkpoint_every
            assert pt.group_pages == pt.groups * per_group
            assert pt.block_pages == blocks * bases[1].dims.n_mla
        dense, sparse = sweep.point(1), sweep.point(8)
        assert dense.mean_reusable > sparse.mean_reusable and dense.mean_lost == 0
