"""The look shared by the Replay ring figures: slot colours and labels, the veil over steps
still to come, fixed ticks. The session they draw: core.experiments.replay_ring."""

from __future__ import annotations

from matplotlib.ticker import MaxNLocator

from core.speculative.session import SlotKind
from tabs.palette import ROLE

KIND_COLOUR = {
    SlotKind.EMPTY: ROLE["empty"],
    SlotKind.COMMITTED: "#8FD3BE",  # accepted green, lighter: committed in an earlier step
    SlotKind.ACCEPTED: ROLE["accepted"],
    SlotKind.ROLLED_BACK: ROLE["rejected"],
}
KIND_LABEL = {
    SlotKind.EMPTY: "empty",
    SlotKind.COMMITTED: "committed earlier",
    SlotKind.ACCEPTED: "pushed, committed (bonus or accepted)",
    SlotKind.ROLLED_BACK: "pushed, rejected (rollback)",
}

DIM = 0.78  # white veil over the steps still to come: drawn, but faint


def shown_steps(step: int, steps: int) -> tuple[int, str]:
    """The last verify step shown, and what the figure shows in words (never a silent clamp)."""
    if step < steps:
        return step, f"steps 1-{step} of {steps}"
    past = f" (asked for {step})" if step > steps else ""
    return steps, f"steps 1-{steps} of {steps}: all{past}"


def fixed_ticks(axis, lo: float, hi: float, nbins: int = 6, integer: bool = False) -> None:
    """Explicit ticks within [lo, hi]: the tick count never depends on the laid-out axes size."""
    values = MaxNLocator(nbins=nbins, integer=integer).tick_values(lo, hi)
    axis.set_ticks([v for v in values if lo - 1e-9 <= v <= hi + 1e-9])
