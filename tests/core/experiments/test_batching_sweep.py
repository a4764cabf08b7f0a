"""The Batching tab's measurements against batch size (core.experiments.batching_union,
batching_routes, batching_texts) and the shipped sweep they make (batching_sweep).

Pinned: uniform routing's expected union against a seeded simulation of uniform top-k picks;
one request's decode step needs exactly k experts per layer and reads each once; the lockstep
teacher-forced pass of one text is core.routing.quality's own teacher_forced, and stock's delta
NLL is exactly 0; a batch under the invariant kernels changes no text. The shipped sweep is the
engine's: made on the shipped weights with these parameters, a sample (the expert union and
cache at the largest batch, every routing method at B = 2) recomputes (counts exactly, float
meters within FP32_REORDERED: another machine sums in another order), and its text rows say
what the engine's oracle does (no text differs under the invariant kernels, none at B = 1
with stock routing).
"""

from __future__ import annotations

import numpy as np
import pytest

from core.experiments.batching_routes import forced, measure_routes
from core.experiments.batching_sweep import (
    BATCHES,
    SLOTS,
    TEXT_NEW,
    UNION_NEW,
    UNION_PROMPTS,
    load,
    route_texts,
)
from core.experiments.batching_texts import measure_texts
from core.experiments.batching_union import measure_union, uniform_union
from core.routing.quality import teacher_forced
from core.serve.prompts import held_out
from tests.tolerance import FP32_REORDERED

pytestmark = pytest.mark.usefixtures("one_thread")


def test_uniform_union_against_a_simulation():
    rng = np.random.default_rng(0)
    E, k = 16, 2
    for B in (1, 3, 8):
        picks = [len({int(e) for _ in range(B) for e in rng.choice(E, k, replace=False)})
                 for _ in range(4000)]
        assert abs(np.mean(picks) - uniform_union(E, k, B)) < 0.05


def test_one_request_reads_k_experts_a_layer(shipped):
    d = shipped.dims
    r = measure_union(shipped, held_out(2), 6, 1, SLOTS)
    assert r.union == (float(d.top_k),) * d.n_layers
    assert r.requests == r.decode_steps * d.n_layers * d.top_k
    assert r.generated == r.decode_steps == 2 * (6 - 1)  # the prefill emits each first byte
    assert 0 <= r.misses <= r.requests


def test_lockstep_of_one_text_is_teacher_forced(shipped):
    text = route_texts(1)[0][:24]
    ours = forced(shipped, [text], None)
    ref = teacher_forced(shipped, text)
    assert np.array_equal(ours.nll[0], ref.nll) and np.array_equal(ours.argmax[0], ref.argmax)


def test_invariant_kernels_change_no_text(shipped):
    rows = measure_texts(shipped, held_out(4), 8, (4,), "invariant")
    assert rows[0].differ == () and rows[0].max_logit_diff == 0.0


@pytest.fixture(scope="module")
def sweep(shipped):
    return load()


def test_union_at_the_largest_batch_recomputes(shipped, sweep):
    got = measure_union(shipped, held_out(UNION_PROMPTS), UNION_NEW, BATCHES[-1], SLOTS)
    assert got == sweep.union[-1]


def test_routing_at_two_recomputes(shipped, sweep):
    got = measure_routes(shipped, route_texts(2), SLOTS)
    want = [r for r in sweep.routing if r.batch == 2]
    assert [(r.method, r.union, r.agree) for r in got] == [
        (r.method, r.union, r.agree) for r in want]
    for a, b in zip(got, want, strict=True):
        assert abs(a.nll - b.nll) <= FP32_REORDERED.max_abs
        assert abs(a.delta_nll - b.delta_nll) <= FP32_REORDERED.max_abs
    assert got[0].method == "stock" and got[0].delta_nll == 0.0


def test_text_rows_agree_with_the_oracle(sweep):
    assert all(r.differ == () for r in sweep.arm("invariant"))
    for arm in ("invariant", "fast", "batch_aware"):
        one = next(r for r in sweep.arm(arm) if r.batch == 1)
        assert one.differ == (), arm  # B = 1 serves each request alone, as its solo run
    assert all(0 <= byte < TEXT_NEW for r in sweep.texts for _, byte in r.differ)
