"""A scenario run seen part-way (core.experts.scenarios.progress) is read from the recorded
steps, never rerun: at the last token it is the whole run; before that, each closed window is
the run's own and the open one holds the stats of the last shown step."""

from __future__ import annotations

import pytest

from core.experts.scenarios import SCENARIOS, run_scenario
from core.experts.scenarios.progress import progress, step_tokens

SLOTS, TOPK, SCHEDULE, SEED = 8, 4, 12, 0


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_last_token_is_the_whole_run(scenario: str) -> None:
    run = run_scenario(scenario, SLOTS, TOPK, SCHEDULE, SEED)
    for token in (SCHEDULE, SCHEDULE + 7):
        p = progress(run, token)
        assert p.complete and p.shown == len(run.steps)
        assert p.windows == run.windows


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_part_way_windows_come_from_the_recorded_steps(scenario: str) -> None:
    run = run_scenario(scenario, SLOTS, TOPK, SCHEDULE, SEED)
    tokens = step_tokens(run)
    assert list(tokens) == sorted(tokens) and tokens[-1] <= SCHEDULE
    shown = [progress(run, t).shown for t in range(SCHEDULE + 1)]
    assert shown == sorted(shown) and shown[-1] == len(run.steps)
    for t in range(SCHEDULE):
        p = progress(run, t)
        if not p.shown:
            continue
        last = run.steps[p.current]
        assert p.windows[-1].stats == last.stats and p.windows[-1].last == p.current
        assert p.windows[:-1] == run.windows[:len(p.windows) - 1]
        assert all(w.claims_only_published for w in p.windows)  # bytes stay honest part-way


def test_token_zero_shows_the_opening_only() -> None:
    run = run_scenario("consume one only", SLOTS, TOPK, SCHEDULE, SEED)
    p = progress(run, 0)
    assert [st.group for st in run.steps[:p.shown]] == ["probe", "probe"]
    assert run.steps[p.shown].group == "t1"
