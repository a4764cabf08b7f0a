"""Frozen records of a scenario run: the slot map after every step and each counter window."""

from __future__ import annotations

from dataclasses import dataclass

from core.experts.scenarios.geometry import EXPERT_BYTES
from core.experts.stats import CacheStats


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    """One slot after a step."""

    state: str  # EMPTY | INFLIGHT | READY
    expert: int  # -1 when EMPTY
    origin: str | None  # demand | prefetch | warm | demand_batch
    consumed: bool
    pinned: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One scripted call (a batch, a run of gets, a warm) and the cache right after it."""

    index: int
    window: int
    group: str  # what the step belongs to: "probe", "t3", "c2", "setup"
    kind: str  # prefetch | consume | warm
    call: str  # the calls made and their outcome, in words
    slots: tuple[Cell, ...]
    touched: tuple[int, ...]  # slots hit or loaded in this step
    evicted: tuple[tuple[int, int, bool], ...]  # (slot, expert, wasted prefetch?)
    failed: tuple[int, ...]  # experts whose read could not complete (nothing published)
    skipped: tuple[int, ...]  # batch members left unreserved (nothing evictable)
    cut_before: bool  # the shard copy was truncated just before this step
    stats: CacheStats  # the window's stats after this step
    published: int = 0  # loads this step published (bytes it may claim: published x payload)


@dataclass(frozen=True, slots=True, kw_only=True)
class Window:
    """A stats window (between reset_stats calls) and its stats at its end."""

    index: int
    first: int  # first and last step index
    last: int
    published: int  # loads that published: the only bytes the counters may claim
    failed: int  # reads that could not complete, as the script saw them
    stats: CacheStats

    @property
    def requests(self) -> int:
        return self.stats.requests

    @property
    def aggregate_error(self) -> int:
        """Upstream's "hits - prefetch_reads" minus the exact resident hits (before the clamp)."""
        return self.stats.aggregate_adjusted_hits - self.stats.hits_resident

    @property
    def aggregate_wrong(self) -> bool:
        return self.requests > 0 and self.aggregate_error != 0

    @property
    def claims_only_published(self) -> bool:
        """bytes_read is exactly the payload of the loads that published: a failed read
        claims 0 B."""
        return self.stats.bytes_read == self.published * EXPERT_BYTES


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioRun:
    name: str
    slots: int
    topk: int
    schedule: int
    seed: int
    slot_bytes: int
    route: tuple[tuple[int, ...], ...]  # the scheduled tokens' top-k, router order
    steps: tuple[Step, ...]
    windows: tuple[Window, ...]
