"""The session every Replay ring figure draws, cached per parameter set (a pure function)."""

from __future__ import annotations

from functools import lru_cache

from matplotlib.ticker import MaxNLocator

from core.speculative.session import ReplaySession, SessionParams, SlotKind, run_session
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

MAX_CAPACITY = 32  # the capacity slider's maximum; the bounds panel sweeps L up to it
MAX_STEPS = 48  # the steps slider's maximum (the step slider's too)
DIM = 0.78  # white veil over the steps still to come: drawn, but faint


def shown_steps(step: int, steps: int) -> tuple[int, str]:
    """The last verify step shown, and what the figure shows in words (never a silent clamp)."""
    if step < steps:
        return step, f"steps 1-{step} of {steps}"
    past = f" (asked for {step})" if step > steps else ""
    return steps, f"steps 1-{steps} of {steps}: all{past}"


@lru_cache(maxsize=32)
def session(capacity: int, draft_len: int, accept_rate: float, steps: int, seed: int,
            dtype: str = "float64") -> ReplaySession:
    """Read-only: figures must never mutate the tensors of a cached session."""
    return run_session(SessionParams(capacity=capacity, draft_len=draft_len,
                                     accept_rate=accept_rate, steps=steps, seed=seed, dtype=dtype))


def fixed_ticks(axis, lo: float, hi: float, nbins: int = 6, integer: bool = False) -> None:
    """Explicit ticks within [lo, hi]: the tick count never depends on the laid-out axes size."""
    values = MaxNLocator(nbins=nbins, integer=integer).tick_values(lo, hi)
    axis.set_ticks([v for v in values if lo - 1e-9 <= v <= hi + 1e-9])
