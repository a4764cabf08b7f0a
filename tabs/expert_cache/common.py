"""Shared by the expert-cache figures: the slots control, the scenario run behind the controls,
and cell colours."""

from __future__ import annotations

from matplotlib.colors import to_rgb

from core.experts.scenarios import STRIDE, Cell, ScenarioRun, check_slots, run_scenario
from tabs.controls import Slider
from tabs.palette import ROLE

SLOTS = Slider(name="slots", label=f"Slots (budget = slots × {STRIDE:,} B)", minimum=5,
               maximum=16, value=8, demo=6,
               info="The hero: fewer slots, more evictions. Must be at least top-k + 1.")


FS = 9  # the smallest text on these figures (pt): legible at a 1024-px browser width


def legible(ax) -> None:
    """Tick labels at FS at least (the lab style draws them at 8 pt)."""
    ax.tick_params(labelsize=FS)


def scenario_run(slots: int, scenario: str, topk: int, schedule: int, seed: int) -> ScenarioRun:
    """The recorded run for these controls (slots checked against topk and the slider's range
    first, by name; the engine itself allows up to 24)."""
    check_slots(slots, topk, int(SLOTS.maximum))
    return run_scenario(scenario, slots, topk, schedule, seed)


def cell_role(c: Cell) -> str:
    """The palette role a slot is drawn in: what its bytes are and whether they served a get."""
    if c.state == "EMPTY":
        return "empty"
    if c.state == "INFLIGHT":
        return "inflight"
    if c.origin in ("demand", "demand_batch"):
        return "miss"  # arrived by a demand miss
    return "hit" if c.consumed else "prefetch"  # loaded ahead: consumed, or still pending


def tint(role: str, amount: float) -> tuple[float, float, float]:
    """The role colour blended towards white by `amount` (0: the colour, 1: white)."""
    r, g, b = to_rgb(ROLE[role])
    return (r + (1 - r) * amount, g + (1 - g) * amount, b + (1 - b) * amount)
