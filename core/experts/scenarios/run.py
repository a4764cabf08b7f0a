"""run_scenario: one preset on a fresh cache, recorded; cached per parameters (frozen result)."""

from __future__ import annotations

import functools
import shutil
import tempfile
from contextlib import nullcontext
from pathlib import Path

from core.errors import check_choice, check_int
from core.experts.cache import ExpertCache
from core.experts.scenarios.geometry import (
    MAX_SCHEDULE,
    MAX_TOPK,
    N_EXPERTS,
    STRIDE,
    check_slots,
    fixture_dir,
    routing,
)
from core.experts.scenarios.presets import SCENARIOS, SCRIPTS
from core.experts.scenarios.recorder import Recorder
from core.experts.scenarios.records import ScenarioRun
from core.experts.shards import ShardIndex


def run_scenario(scenario: str, slots: int, topk: int, schedule: int, seed: int) -> ScenarioRun:
    """Run one preset on a fresh cache of `slots` slots; cached per parameters (frozen result)."""
    check_choice("scenario", scenario, SCENARIOS)
    topk = check_int("topk", topk, 1, MAX_TOPK)
    slots = check_slots(slots, topk)
    schedule = check_int("schedule", schedule, 1, MAX_SCHEDULE)
    seed = check_int("seed", seed, 0, 2**32 - 1)
    return _run(scenario, slots, topk, schedule, seed)


def clear_cache() -> None:
    """Forget every cached run (the next run_scenario records afresh)."""
    _run.cache_clear()


@functools.lru_cache(maxsize=64)
def _run(scenario: str, slots: int, topk: int, schedule: int, seed: int) -> ScenarioRun:
    route = routing(schedule, topk, seed)
    cut = scenario == "truncated shard"
    with tempfile.TemporaryDirectory(prefix="serving-lab-cut-") if cut else nullcontext() as own:
        src = fixture_dir()
        if own:  # never cut the shared fixture: cut a private copy
            for f in sorted(src.glob("*.safetensors")):
                shutil.copyfile(f, Path(own) / f.name)
            src = Path(own)
        index = ShardIndex.open(src)
        with ExpertCache(index, 1, N_EXPERTS, topk, slots * STRIDE) as cache:
            rec = Recorder(cache, index)
            SCRIPTS[scenario](rec, route, topk, slots)
            rec.close_window()
            slot_bytes = cache.slot_bytes
    return ScenarioRun(name=scenario, slots=slots, topk=topk, schedule=schedule, seed=seed,
                       slot_bytes=slot_bytes, route=route, steps=tuple(rec.steps),
                       windows=tuple(rec.windows))
