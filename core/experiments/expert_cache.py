"""The Expert cache tab's experiment: a scripted run of the real ExpertCache for the tab's
controls (core.experts.scenarios, which caches each run). numpy only: the tab declares its
controls with SLOTS before torch loads.

  SLOTS   the tab's range of slots (the engine allows more: core.experts.scenarios.MAX_SLOTS)
  scenario_run(slots, scenario, topk, schedule, seed)   the ScenarioRun; slots is checked
          against topk and SLOTS first, by name
"""

from __future__ import annotations

from core.experts.scenarios import ScenarioRun, check_slots, run_scenario

SLOTS = (5, 16)


def scenario_run(slots: int, scenario: str, topk: int, schedule: int, seed: int) -> ScenarioRun:
    check_slots(slots, topk, SLOTS[1])
    return run_scenario(scenario, slots, topk, schedule, seed)
