"""The shipped sweep (assets/routing) is the engine's: a sample recomputes (every decision
exactly, the float meters within FP32_REORDERED: the sweep was made on another machine).

Pinned: one file per capacity, made on the shipped weights (the fingerprint), covering every
setting the tab's controls reach; the stored LRU replay equals the stored live stock hits and
Belady is not below it; every prefetch pass scores exactly stock's NLL; the stored rank-strip
moment substitutes under the default setting; and the default setting's routing pass and a
cache_prior pass with prefetch, recomputed from scratch, equal the stored records field for
field. Rebuild with `python -m core.experiments.routing_sweep` after retraining the model.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from core.experiments.routing_grid import (
    ALPHAS,
    DEFAULT,
    TAB_METHODS,
    capacities,
    tab_route,
    windows,
)
from core.experiments.routing_sweep import CELL_STEPS, PILOT, load, texts
from core.model.weights import ASSET_DIR
from core.routing import select_experts, teacher_forced
from core.routing.record import run_pass
from core.routing.warm_state import warm_up
from tests.tolerance import FP32_REORDERED


@pytest.fixture(scope="module")
def sweeps(shipped):
    return {c: load(c) for c in capacities(shipped.dims)}


def test_every_setting_is_there(shipped, sweeps) -> None:
    d = shipped.dims
    for sw in sweeps.values():
        for method in TAB_METHODS:
            for M in windows(d):
                for J in range(d.top_k + 1):
                    for alpha in ALPHAS:
                        arms = sw.arms(tab_route(method, M, J, alpha, d))
                        assert set(arms) == {"stock", "routing", "prefetch", "both"}


def test_replay_and_prefetch(shipped, sweeps) -> None:
    for sw in sweeps.values():
        st = sw.stock
        assert sw.replay["requests"] == st.requests
        assert sw.replay["lru"] == st.hit_resident + st.hit_prefetched
        assert sw.replay["belady"] >= sw.replay["lru"]
        for rec in sw.prefetch.values():
            assert rec.delta_nll == 0.0 and rec.nll == st.nll and rec.swaps == 0
        assert st.delta_nll == 0.0 and st.hit_prefetched == 0


def test_the_moment_substitutes(shipped, sweeps) -> None:
    d = shipped.dims
    route = tab_route(DEFAULT["method"], DEFAULT["M"], DEFAULT["J"], DEFAULT["alpha"], d)
    for sw in sweeps.values():
        mo = sw.moment
        sel = select_experts(torch.tensor([mo.scores]), torch.tensor(mo.resident), route)
        assert int(sel.swaps[0]) > 0


def _same_record(got, shipped) -> None:
    """Every decision (hits, swaps, cells, counts) exactly; the float meters (NLL, KL, shifts)
    within FP32_REORDERED: the shipped sweep was computed on another machine, whose float32
    sums run in another order."""
    for f in dataclasses.fields(got):
        a, b = getattr(got, f.name), getattr(shipped, f.name)
        if isinstance(a, float):
            assert abs(a - b) <= FP32_REORDERED.max_abs, (f.name, a, b)
        else:
            assert a == b, f.name


def test_a_sample_recomputes_exactly(shipped, sweeps, one_thread) -> None:
    d = shipped.dims
    cap = capacities(d)[1]
    sw = sweeps[cap]
    warm, scored = texts()
    assert sw.text == {"seed": 0, "warmup_bytes": len(warm), "score_bytes": len(scored),
                       "cell_steps": CELL_STEPS}
    start = warm_up(ASSET_DIR, shipped, cap, warm)
    ref = teacher_forced(shipped, scored)
    route = tab_route(DEFAULT["method"], DEFAULT["M"], DEFAULT["J"], DEFAULT["alpha"], d)
    _same_record(run_pass(shipped, ASSET_DIR, cap, start, scored, route, ref,
                          cell_steps=CELL_STEPS).record, sw.routing[route.label()])
    prior = tab_route("cache_prior", windows(d)[2], 0, 1.0, d)
    _same_record(run_pass(shipped, ASSET_DIR, cap, start, scored, prior, ref, predictor=PILOT,
                          cell_steps=CELL_STEPS).record, sw.both[prior.label()])
