"""Shared by the expert-cache figures: text size and cell colours. The run they draw:
core.experiments.expert_cache."""

from __future__ import annotations

from matplotlib.colors import to_rgb

from core.experts.scenarios import Cell
from tabs.palette import ROLE

FS = 9  # the smallest text on these figures (pt): legible at a 1024-px browser width


def legible(ax) -> None:
    """Tick labels at FS at least (the lab style draws them at 8 pt)."""
    ax.tick_params(labelsize=FS)


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
