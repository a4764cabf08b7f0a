"""Shared by the expert-cache figures: the scenario run behind the controls, and cell colours."""

from __future__ import annotations

from matplotlib.colors import to_rgb

from core.experts.scenarios import Cell, ScenarioRun, check_slots, run_scenario
from tabs.palette import ROLE

SLOTS_MAX = 16  # the slider's range; the engine allows up to 24


def scenario_run(slots: int, scenario: str, topk: int, schedule: int, seed: int) -> ScenarioRun:
    """The recorded run for these controls (slots checked against topk first, by name)."""
    check_slots(slots, topk, SLOTS_MAX)
    return run_scenario(scenario, slots, topk, schedule, seed)


def cell_role(c: Cell) -> str:
    """The palette role a slot is drawn in: what its bytes are and whether they served a get."""
    if c.state == "EMPTY":
        return "empty"
    if c.state == "INFLIGHT":
        return "inflight"
    if c.origin == "demand":
        return "miss"  # arrived by a demand miss
    return "hit" if c.consumed else "prefetch"  # loaded ahead: consumed, or still pending


def tint(role: str, amount: float) -> tuple[float, float, float]:
    """The role colour blended towards white by `amount` (0: the colour, 1: white)."""
    r, g, b = to_rgb(ROLE[role])
    return (r + (1 - r) * amount, g + (1 - g) * amount, b + (1 - b) * amount)


def pct(num: int, den: int) -> float:
    return 100.0 * num / den if den else 0.0
