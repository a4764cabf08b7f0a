"""core.serve.invariance measures what batching does to texts; core.bench batch runs.

Pinned on the tiny model: with invariant kernels no text differs at any batch size and the
prompts' logits move by exactly 0; fast and cache-aware rows have one row per batch size, their
divergences name a request and a byte inside its text, with a margin >= 0 (stock routing); the
batching benchmark runs end to end on a few prompts (its own target column judges speed).
"""

from __future__ import annotations

import pytest

from core.errors import ParamError
from core.serve.invariance import measure
from tests.core.model.conftest import tiny_model

pytestmark = pytest.mark.usefixtures("one_thread")
PROMPTS = [b"def load(path):\n", b"class Cache:", b'{"id": 7, "name": "carol"}\n', b"x" * 70]


def test_invariant_kernels_change_no_text(tiny_dir):
    rows = measure(tiny_model(0), PROMPTS, 6, (1, 2, 4), invariant=True, directory=tiny_dir)
    assert [r.batch for r in rows] == [1, 2, 4]
    assert all(r.same == r.requests == 4 and r.max_logit_diff == 0.0 for r in rows)


@pytest.mark.parametrize("routing", [False, True], ids=["fast kernels", "cache-aware routing"])
def test_divergences_point_into_the_texts(tiny_dir, routing):
    rows = measure(tiny_model(0), PROMPTS, 6, (1, 4), invariant=routing, routing=routing,
                   capacity=4, directory=tiny_dir)
    for r in rows:
        for d in r.differ:
            assert 0 <= d.request < len(PROMPTS) and 0 <= d.byte < 6
            assert (d.margin is None) == routing and (routing or d.margin >= 0)


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"prompts": []}, "prompts"), ({"n_new": 0}, "n_new"), ({"batches": (0,)}, "batch"),
    ({"capacity": 1}, "capacity"),
])
def test_bad_input_names_the_parameter(tiny_dir, kwargs, name):
    args = {"prompts": PROMPTS, "n_new": 3, "batches": (1,), "capacity": 4} | kwargs
    with pytest.raises(ParamError, match=name):
        measure(tiny_model(0), args.pop("prompts"), args.pop("n_new"), args.pop("batches"),
                directory=tiny_dir, **args)


def test_the_batching_benchmark_runs(capsys):
    from core.bench.batch import main

    assert main(["--prompts", "4", "--new", "3", "--batches", "1,2", "--no-cache",
                 "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "Engine one at a time" in out and "resident invariant B = 2" in out
    assert "tight pool" in out and "reserve" in out and "optimistic" in out
