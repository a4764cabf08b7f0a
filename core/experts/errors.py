"""Errors of the expert-cache engine; each message names the file, key or parameter at fault."""

from __future__ import annotations

from core.errors import ParamError


class ShardFormatError(ValueError):
    """A safetensors shard whose header is malformed or inconsistent with the file."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class ExpertLoadError(RuntimeError):
    """An expert that cannot be served: missing tensors, bad layout, or bytes that never arrived."""


class SlotsExhausted(ExpertLoadError):
    """Every slot is in flight, pinned or leased: nothing can be evicted (counted as a drop)."""


class BudgetTooSmall(ParamError):
    """The budget holds fewer than topk + 1 slots, so one token could evict its own experts."""


class NotResident(ValueError):
    """An operation (pin, unpin) that needs a resident expert was given one that is not."""


class StaleView(RuntimeError):
    """A view used after its slot was reused: the lease contract was broken."""
