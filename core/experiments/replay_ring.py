"""The Replay ring tab's experiment: one seeded speculative session streamed through
ReplaySSM's raw-input ring (core.speculative.session), cached per parameter set.

  session(capacity, draft_len, accept_rate, steps, seed, dtype)   ReplaySession, read-only
          (figures must never mutate its tensors)
"""

from __future__ import annotations

from core.experiments.flight import single_flight
from core.speculative.session import ReplaySession, SessionParams, run_session


@single_flight(32)
def session(capacity: int, draft_len: int, accept_rate: float, steps: int, seed: int,
            dtype: str = "float64") -> ReplaySession:
    return run_session(SessionParams(capacity=capacity, draft_len=draft_len,
                                     accept_rate=accept_rate, steps=steps, seed=seed, dtype=dtype))
