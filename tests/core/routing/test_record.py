"""A recorded pass: its cells add up to its totals, and its arms are what their names say.

Pinned: a cell's code round-trips; per layer, the cells' hits equal the pass's per-layer hits
and sum to the cache's own counters; a substituted cell is exactly a (step, layer) with a swap;
every waste the cache counted is a hatched cell; prefetch leaves the scored output bit for bit
as stock's (delta NLL 0, the same NLL array); a pass is reproducible from its inputs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.errors import ParamError
from core.routing import RouteConfig, teacher_forced
from core.routing.record import PassRecord, cell_code, cell_fields, run_pass
from core.routing.warm_state import warm_up
from tests.core.routing.conftest import TINY
from tests.core.routing.test_meters import overlaps

TEXT = b'{"id": 7, "name": "ada"}\nx = 3 * 4\n'
CAP = 12


@pytest.mark.parametrize("k", [1, 2, 3])
def test_cell_code_round_trips(k: int) -> None:
    for r in range(k + 1):
        for p in range(k + 1 - r):
            for sub in (False, True):
                for w in (False, True):
                    c = cell_code(r, p, sub, w, k)
                    assert c.isalnum() or c in "+/"
                    assert cell_fields(c, k) == (r, p, sub, w)


@pytest.fixture(scope="module")
def runs(tiny, tiny_dir: Path, one_thread):
    start = warm_up(tiny_dir, tiny, CAP, b"print(1)\n")
    ref = teacher_forced(tiny, TEXT)
    stock = RouteConfig("topk", k=TINY.top_k)
    route = RouteConfig("max_rank", k=TINY.top_k, J=0, M=TINY.n_experts)
    out = {"stock": run_pass(tiny, tiny_dir, CAP, start, TEXT, stock, ref)}
    out["prefetch"] = run_pass(tiny, tiny_dir, CAP, start, TEXT, stock, ref, predictor="pilot")
    out["routing"] = run_pass(tiny, tiny_dir, CAP, start, TEXT, route, ref)
    out["both"] = run_pass(tiny, tiny_dir, CAP, start, TEXT, route, ref, predictor="previous")
    out["again"] = run_pass(tiny, tiny_dir, CAP, start, TEXT, route, ref, predictor="previous")
    return out


def test_cell_code_needs_a_small_k() -> None:
    with pytest.raises(ParamError, match=r"k must be in \[1, 3\]"):
        cell_code(0, 0, False, False, 4)


def _cells(rec: PassRecord) -> np.ndarray:
    return np.array([[cell_fields(c, TINY.top_k) for c in row] for row in rec.cells])


@pytest.mark.parametrize("arm", ["stock", "prefetch", "routing", "both"])
def test_cells_add_up(runs, arm: str) -> None:
    rec = runs[arm].record
    cells = _cells(rec)  # [L, T, 4]: resident, prefetched, substitute, wasted
    assert cells.shape[:2] == (TINY.n_layers, len(TEXT) - 1) == (TINY.n_layers, rec.positions)
    assert list(cells[..., 0].sum(1) + cells[..., 1].sum(1)) == rec.layer_hits
    assert cells[..., 0].sum() == rec.hit_resident
    assert cells[..., 1].sum() == rec.hit_prefetched
    assert rec.hit_resident + rec.hit_prefetched + rec.miss == rec.requests
    assert sum(rec.layer_requests) == rec.requests == rec.slots
    assert bool(cells[..., 3].any()) == (rec.wasted > 0)
    assert cells[..., 3].sum() <= rec.wasted


@pytest.mark.parametrize("arm", ["stock", "routing", "both"])
def test_agree_equals_a_recount_of_the_experts_used(runs, arm: str) -> None:
    """The experts each step used (the MoE's routing, as the provider saw it) against the
    top-k of the router's scores, counted here, give the record's agree and swap rate."""
    run = runs[arm]
    k, L = TINY.top_k, TINY.n_layers
    used = [run.steps[t][layer] for t in range(len(run.steps)) for layer in range(L)]
    counted = sum(overlaps(run.scores.reshape(-1, TINY.n_experts), used, k))
    assert len(used) * k == run.record.slots
    assert run.record.agree == pytest.approx(counted / run.record.slots, rel=1e-12)
    assert run.record.swaps == run.record.slots - counted


def test_substituted_cells_are_the_swaps(runs) -> None:
    rec = runs["routing"].record
    cells = _cells(rec)
    assert rec.swaps > 0
    # k = 2, J = 0: a cell holds 0, 1 or 2 swaps; at least one per outlined cell
    assert cells[..., 2].sum() <= rec.swaps <= TINY.top_k * cells[..., 2].sum()
    assert runs["stock"].record.swaps == 0 and not _cells(runs["stock"].record)[..., 2].any()


def test_prefetch_changes_placement_only(runs) -> None:
    stock, pre = runs["stock"], runs["prefetch"]
    assert np.array_equal(stock.scored.nll, pre.scored.nll)
    assert pre.record.delta_nll == 0.0 == stock.record.delta_nll
    assert pre.record.greedy_agree == 1.0 and pre.record.first_divergence is None
    assert pre.record.hit_prefetched > 0 and stock.record.hit_prefetched == 0
    assert pre.record.prefetch_bytes > 0 and sum(n for n, _ in pre.record.issues.values()) > 0
    assert sum(b for _, b in pre.record.issues.values()) == pre.record.prefetch_bytes


def test_reproducible(runs) -> None:
    assert runs["again"].record == runs["both"].record
    assert PassRecord.from_json(runs["both"].record.to_json()) == runs["both"].record


def test_standard_error_and_kept_cells(runs, tiny, tiny_dir: Path) -> None:
    rec, run = runs["routing"].record, runs["routing"]
    diff = run.scored.nll - runs["stock"].scored.nll
    assert rec.delta_nll == pytest.approx(diff.mean(), abs=1e-12)
    assert rec.nll_se == pytest.approx(diff.std() / np.sqrt(len(diff)), rel=1e-12)
    assert runs["stock"].record.nll_se == 0.0
    start = warm_up(tiny_dir, tiny, CAP, b"print(1)\n")
    short = run_pass(tiny, tiny_dir, CAP, start, TEXT, RouteConfig("topk", k=TINY.top_k),
                     teacher_forced(tiny, TEXT), cell_steps=5).record
    assert [len(row) for row in short.cells] == [5] * TINY.n_layers
    assert short.cells == [row[:5] for row in runs["stock"].record.cells]
