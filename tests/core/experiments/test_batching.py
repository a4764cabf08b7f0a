"""The Batching tab's scheduler run (core.experiments.batching), checked against what the engine
and the model say independently of the run's own bookkeeping.

Pinned: every request's text is HybridLM.generate's (whatever its batch, policy or pool); each
request's cells add up to its prompt (plus what it recomputed) and its n_new bytes, and its
time to first token and time per output token, recounted here from the cells, equal the
engine's Timing; no step feeds more than its budget; under prefill_first a decoding request
stalls while a prompt is prefilled and under mixed it never does; a tight pool preempts under
optimistic admission and never under reserve; the workload's bounds (the pool slider's range,
the step slider's maximum) are what the page pool's arithmetic and the longest runs give.
"""

from __future__ import annotations

import pytest

from core.errors import ParamError
from core.experiments.batching import WORKED, Run, fit_at_once, run
from core.experiments.batching_workload import (
    ARRIVALS,
    MAX_BATCH,
    MAX_SPACING,
    MAX_STEPS,
    POOL_MAX,
    POOL_MIN,
    prompts,
)
from core.serve.engine import Engine

pytestmark = pytest.mark.usefixtures("one_thread")
DEFAULT = (4, 256, 128, "mixed", "reserve", POOL_MAX, 2)
TIGHT = (4, 256, 128, "mixed", "optimistic", 44, 2)


def _check_cells(r: Run) -> None:
    """Recount each request's life from its cells and hold it against the engine's reports."""
    for i, s in enumerate(r.requests):
        cells = [st.cells[i] for st in r.steps]
        fed = sum(c.tokens for c in cells if c.kind in ("prefill", "replay"))
        assert fed == s.prompt_tokens + s.recomputed
        assert sum(c.emitted for c in cells) == s.n_new
        first = next(st.index for st, c in zip(r.steps, cells, strict=True) if c.emitted)
        last = next(st.index for st, c in zip(r.steps, cells, strict=True) if c.finished)
        assert [c.finished for c in cells].count(True) == 1
        assert (first, last) == (s.first_step, s.finished_step)
        arrived = next(k for k, c in enumerate(cells) if c.kind != "absent")
        assert arrived == s.arrived == i * r.spacing
        assert s.ttft == first - s.arrived
        assert s.tpot == (last - first) / (s.n_new - 1)
        assert all(c.kind == "absent" for c in cells[last:])
        assert sum(c.kind == "preempted" for c in cells) == s.preemptions
    for st in r.steps:
        assert st.tokens <= st.budget
        assert st.tokens == sum(c.tokens for c in st.cells if c.kind in WORKED)


@pytest.mark.parametrize("setting", [DEFAULT, TIGHT, (1, 64, 64, "prefill_first", "reserve",
                                                       POOL_MIN, 0)], ids=str)
def test_texts_are_greedy_and_cells_add_up(shipped, setting):
    r = run(*setting)
    for s, p, a in zip(r.requests, prompts(), ARRIVALS, strict=True):
        assert s.text == shipped.generate(p, a.n_new)
    _check_cells(r)


def _decoders_stalled_by_prefill(r: Run) -> int:
    """Steps x requests where a request that has emitted a byte and not finished got no work
    while another request's prompt was prefilled."""
    n, emitted = 0, [0] * len(ARRIVALS)
    for st in r.steps:
        prefill = any(c.kind == "prefill" for c in st.cells)
        for i, c in enumerate(st.cells):
            if prefill and c.kind == "stalled" and 0 < emitted[i]:
                n += 1
            emitted[i] += c.emitted
    return n


def test_prefill_first_stalls_decoders_and_mixed_does_not():
    first = run(4, 256, 128, "prefill_first", "reserve", POOL_MAX, 2)
    mixed = run(*DEFAULT)
    assert _decoders_stalled_by_prefill(first) > 0
    assert _decoders_stalled_by_prefill(mixed) == 0
    assert max(s.tpot for s in first.requests) > max(s.tpot for s in mixed.requests)


def test_a_tight_pool_preempts_only_when_optimistic():
    tight, reserve = run(*TIGHT), run(*TIGHT[:4], "reserve", *TIGHT[5:])
    assert tight.preemptions > 0 and tight.recomputed > 0
    assert reserve.preemptions == 0 and reserve.recomputed == 0
    assert max(st.pages_used for st in tight.steps) <= TIGHT[5]
    _check_cells(reserve)


def test_pages_per_request_follow_the_pool_arithmetic(shipped):
    eng = Engine(shipped, POOL_MAX)
    d = shipped.dims
    r = run(*DEFAULT)
    for s, p, a in zip(r.requests, prompts(), ARRIVALS, strict=True):
        n = len(p) + a.n_new
        assert s.mla_pages + s.kda_pages == eng.memory.pages_alone(n)
        assert s.mla_pages == d.n_mla * -(-n // eng.P)
    alone = [eng.memory.pages_alone(len(p) + a.n_new) for p, a in
             zip(prompts(), ARRIVALS, strict=True)]
    assert POOL_MIN == max(alone)  # the smallest pool every request fits alone
    assert sum(alone) <= POOL_MAX  # every request at once, each with all it can need
    assert MAX_BATCH == len(ARRIVALS)


def test_the_longest_runs_fit_the_step_slider():
    """One request at a time at the smallest budget and chunk and the widest spacing, and
    a pool tight enough to preempt several times: the step slider reaches their last step."""
    for setting in [(1, 64, 64, "mixed", "reserve", POOL_MIN, MAX_SPACING),
                    (1, 64, 64, "prefill_first", "optimistic", POOL_MIN, 0),
                    (3, 64, 64, "mixed", "optimistic", 44, 0)]:
        assert len(run(*setting).steps) <= MAX_STEPS


def test_bad_knobs_name_the_parameter():
    with pytest.raises(ParamError, match="spacing"):
        run(*DEFAULT[:6], MAX_SPACING + 1)
    with pytest.raises(ParamError, match="policy"):
        run(4, 256, 128, "fifo", "reserve", POOL_MAX, 2)


def test_fit_at_once_counts_arrivals_in_order():
    assert fit_at_once(44, [22, 24, 22]) == 1  # 22 + 24 > 44: the second never fits beside
    assert fit_at_once(46, [22, 24, 22]) == 2
    assert fit_at_once(68, [22, 24, 22]) == 3
    assert fit_at_once(21, [22, 1]) == 0  # in arrival order: the small one waits its turn


def test_first_pages_are_what_optimistic_admission_takes(shipped):
    """Each request alone on an engine with optimistic admission holds, after its first step,
    exactly the pages the run says its first chunk takes (prefix cache off: no cache pages)."""
    r = run(4, 128, 64, "mixed", "optimistic", POOL_MAX, 2)
    for s, p, a in zip(r.requests, prompts(), ARRIVALS, strict=True):
        eng = Engine(shipped, POOL_MAX, prefix_cache=False, max_step_tokens=128,
                     prefill_chunk=64, admission="optimistic")
        eng.submit(p, a.n_new, a.draft_len)
        pages = eng.step().pages
        assert pages.total - pages.free == s.first_pages
