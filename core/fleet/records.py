"""Per-request records of a fleet simulation (one row per offered request, kept as columns) and
the statistics of one failure. SimResult, which bundles them with the summary, is in result.py.

A rejected request has admitted=False, cluster=-1, and NaN for admitted_at, start, ttft and
finish: it has no latency, and every summary counts it as a rejection and an SLO miss, never as a
number in a percentile.

An admitted request holds its class budget from admitted_at (its arrival, or the release that
let it out of the budget queue) to finish (its last token, or the failure that interrupted it).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np

from core.fleet.budgets import CLASSES


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestRecord:
    """One request; times in seconds from the trace origin."""

    index: int
    arrival: float
    klass: str
    session: int
    prompt_tokens: int
    admitted: bool
    deferred: bool  # waited in a budget queue before admission
    cluster: int  # -1 when rejected
    admitted_at: float  # budget admission (takes its units); NaN when rejected
    start: float  # prefill start; NaN when rejected
    ttft: float  # first token - arrival; NaN when rejected
    finish: float  # last token, or the failure time if interrupted (units freed); NaN if rejected
    reused_tokens: int
    on_primary: bool  # served by the ring primary of its key (the affinity target)
    requeued: bool  # moved off a failed cluster before its first token
    interrupted: bool  # its cluster failed after the first token (decode lost)
    moved: bool  # first turn of a failed cluster's session served elsewhere (cold there)


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Records:
    """Columns, one entry per request in trace order; row(i) gives one RequestRecord."""

    arrival: np.ndarray  # (n,) float64
    klass: np.ndarray  # (n,) int8
    session: np.ndarray  # (n,) int64
    prompt_tokens: np.ndarray  # (n,) int64
    admitted: np.ndarray  # (n,) bool
    deferred: np.ndarray  # (n,) bool
    cluster: np.ndarray  # (n,) int32, -1 when rejected
    admitted_at: np.ndarray  # (n,) float64, NaN when rejected
    start: np.ndarray  # (n,) float64, NaN when rejected
    ttft: np.ndarray  # (n,) float64, NaN when rejected
    finish: np.ndarray  # (n,) float64, NaN when rejected
    reused_tokens: np.ndarray  # (n,) int64
    on_primary: np.ndarray  # (n,) bool
    requeued: np.ndarray  # (n,) bool
    interrupted: np.ndarray  # (n,) bool
    moved: np.ndarray  # (n,) bool

    @property
    def n(self) -> int:
        return int(self.arrival.shape[0])

    @property
    def wait(self) -> np.ndarray:
        """Queue wait (budget queue plus cluster queue) per request; NaN when rejected."""
        return self.start - self.arrival

    def row(self, i: int) -> RequestRecord:
        return RequestRecord(
            index=i,
            arrival=float(self.arrival[i]),
            klass=CLASSES[int(self.klass[i])],
            session=int(self.session[i]),
            prompt_tokens=int(self.prompt_tokens[i]),
            admitted=bool(self.admitted[i]),
            deferred=bool(self.deferred[i]),
            cluster=int(self.cluster[i]),
            admitted_at=float(self.admitted_at[i]),
            start=float(self.start[i]),
            ttft=float(self.ttft[i]),
            finish=float(self.finish[i]),
            reused_tokens=int(self.reused_tokens[i]),
            on_primary=bool(self.on_primary[i]),
            requeued=bool(self.requeued[i]),
            interrupted=bool(self.interrupted[i]),
            moved=bool(self.moved[i]),
        )

    def rows(self) -> list[RequestRecord]:
        return [self.row(i) for i in range(self.n)]

    def to_jsonl(self) -> str:
        """One JSON object per request; a rejected request's times (and latency) are null."""
        out = []
        for r in self.rows():
            d = asdict(r)
            for f in ("admitted_at", "start", "ttft", "finish"):
                d[f] = None if np.isnan(d[f]) else d[f]
            out.append(json.dumps(d))
        return "\n".join(out) + ("\n" if out else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class FailoverStats:
    """What one failure cost: sessions displaced, cache lost, work redone, time to recover."""

    cluster: int
    fail_at: float
    recover_at: float | None
    sessions_bound: int  # sessions whose latest turn ran on the cluster when it failed
    sessions_moved: int  # of those, sessions whose next turn was served elsewhere
    cache_lost_tokens: int
    requeued: int  # queued or prefilling there, re-routed
    interrupted: int  # past their first token there, decode lost
    # failover.short_recovery_time: seconds until the short class's P95 TTFT is back; None: not
    # recovered by recover_at (or the last arrival); NaN: no short request before the failure
    recovery_time_s: float | None
