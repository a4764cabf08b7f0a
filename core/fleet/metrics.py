"""Honest serving metrics: latency over admitted requests only, rejections counted separately.

  rejection rate   rejected / offered
  TTFT P50/95/99   over admitted requests that produced a first token, with n beside them (NaN
                   when n == 0). In the simulator that is every admitted request: a failure before
                   the first token requeues the request, so an interrupted request (its decode cut
                   off by a failure AFTER its first token) keeps its real TTFT and is included,
                   and the summary reports how many were interrupted beside n.
  completed        admitted and not interrupted: the request got every output token
  SLO attainment   (completed and TTFT <= SLO) / offered: a rejection or an interruption is a
                   miss, never a latency and never a success
  goodput          requests per second that completed and met the SLO

fleet.md §4 asks for percentiles over admitted AND completed requests. We keep interrupted
requests in the TTFT sample on purpose: their first token was delivered at that time, and dropping
them would make a failure look faster (they are the requests that were served before it). They
are never counted as successes: attainment and goodput use completed requests only.

naive_p95_with_rejections_as_sentinel() reproduces the seed demo's flaw on purpose, so a figure
can show it beside the correct numbers. The P95 of "admitted TTFTs plus a sentinel per
rejection" interpolates at position 0.95 (n - 1) of the sorted values: with m of n rejected it
is pulled towards the sentinel once m >= n - ceil(0.95 (n - 1)) (at exactly 5% rejected it is
already about 0.05 x the sentinel) and equals the sentinel once m >= n - floor(0.95 (n - 1)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from core.errors import ParamError, check_float, check_int
from core.fleet.budgets import CLASSES
from core.fleet.records import Records

SEED_SENTINEL = 2_000_000.0  # what the seed demo recorded as a rejected request's "TTFT"


def percentiles(values: Sequence[float] | np.ndarray, qs: Sequence[float]) -> list[float]:
    """Linear-interpolation percentiles (numpy's default method); NaN for an empty sample."""
    for q in qs:
        check_float("q", q, 0.0, 100.0)
    x = np.sort(np.asarray(values, dtype=np.float64).ravel())
    if x.size and np.isnan(x[-1]):
        raise ParamError("values must not contain NaN; filter rejected requests out first")
    n = x.size
    out = []
    for q in qs:
        if n == 0:
            out.append(math.nan)
            continue
        pos = q / 100.0 * (n - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, n - 1)
        out.append(float(x[lo] + (x[hi] - x[lo]) * (pos - lo)))
    return out


def percentile(values: Sequence[float] | np.ndarray, q: float) -> float:
    return percentiles(values, (q,))[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassSummary:
    """One class (or "all"); p50/p95/p99 are over the n_ttft admitted requests (each produced a
    first token; the `interrupted` ones among them lost their decode to a failure and count as
    SLO misses)."""

    name: str
    offered: int
    admitted: int
    rejected: int
    deferred: int
    interrupted: int  # admitted, first token delivered, decode cut off by a failure
    completed: int  # admitted and not interrupted
    met: int  # completed with TTFT <= SLO: the numerator of attainment and goodput
    rejection_rate: float
    deferral_rate: float
    n_ttft: int
    p50: float
    p95: float
    p99: float
    mean_wait: float
    slo_s: float
    slo_attainment: float
    goodput_rps: float


@dataclass(frozen=True, slots=True)
class LoadStats:
    """Spread of per-cluster load: max/mean, min/mean and coefficient of variation (std/mean)."""

    max_over_mean: float
    min_over_mean: float
    cv: float


def load_stats(counts: Sequence[float] | np.ndarray) -> LoadStats:
    x = np.asarray(counts, dtype=np.float64)
    if x.size == 0:
        raise ParamError("counts must hold at least one cluster's load")
    mean = float(x.mean())
    if mean == 0.0:
        return LoadStats(math.nan, math.nan, math.nan)
    return LoadStats(float(x.max()) / mean, float(x.min()) / mean, float(x.std()) / mean)


def summarize_class(
    name: str,
    ttft: np.ndarray,
    admitted: np.ndarray,
    deferred: np.ndarray,
    wait: np.ndarray,
    slo_s: float,
    duration_s: float,
    interrupted: np.ndarray | None = None,
) -> ClassSummary:
    """Metrics for one group of requests; ttft/wait entries of rejected requests are ignored.

    `interrupted` (default: none) marks admitted requests whose decode a failure cut off: their
    TTFT stays in the percentiles, but they are SLO misses (not completed).
    """
    check_float("slo_s", slo_s, 0.0, math.inf)
    check_float("duration_s", duration_s, 0.0, math.inf)
    offered = int(admitted.size)
    adm = admitted.astype(bool)
    cut = np.zeros(offered, dtype=bool) if interrupted is None else np.asarray(interrupted, bool)
    if cut.shape != adm.shape:
        raise ParamError(f"interrupted must have one entry per request, got shape {cut.shape}")
    cut = cut & adm
    done = adm & ~cut
    lat = ttft[adm]
    met = int(np.count_nonzero(ttft[done] <= slo_s))
    p50, p95, p99 = percentiles(lat, (50, 95, 99))
    n_adm = int(adm.sum())
    n_def = int(np.count_nonzero(deferred & adm))
    n_cut = int(cut.sum())
    return ClassSummary(
        name=name,
        offered=offered,
        admitted=n_adm,
        rejected=offered - n_adm,
        deferred=n_def,
        interrupted=n_cut,
        completed=n_adm - n_cut,
        met=met,
        rejection_rate=(offered - n_adm) / offered if offered else math.nan,
        deferral_rate=n_def / offered if offered else math.nan,
        n_ttft=int(lat.size),
        p50=p50,
        p95=p95,
        p99=p99,
        mean_wait=float(wait[adm].mean()) if n_adm else math.nan,
        slo_s=slo_s,
        slo_attainment=met / offered if offered else math.nan,
        goodput_rps=met / duration_s if duration_s > 0 else math.nan,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    """Per class (short, long) and overall, plus fleet-level cache and load figures."""

    classes: tuple[ClassSummary, ...]  # one per CLASSES entry
    overall: ClassSummary
    hit_rate: float  # reused prompt tokens / prompt tokens, admitted requests
    on_primary_rate: float  # admitted requests served by their key's ring primary
    load: LoadStats  # over requests served per cluster
    served: tuple[int, ...]  # requests served per cluster

    def by_class(self, name: str) -> ClassSummary:
        for c in self.classes:
            if c.name == name:
                return c
        raise ParamError(f"name must be one of {list(CLASSES)}, got {name!r}")


def summarize(
    records: Records, slo_s: tuple[float, float], clusters: int, duration_s: float | None = None
) -> Summary:
    """Summary from records alone; duration defaults to the arrival span (goodput's denominator)."""
    clusters = check_int("clusters", clusters, 1, 1 << 20)
    if len(slo_s) != len(CLASSES):
        raise ParamError(f"slo_s must be a (short, long) pair, got {slo_s!r}")
    if duration_s is None:
        duration_s = float(records.arrival.max() - records.arrival.min()) if records.n > 1 else 0.0
    wait = records.wait
    parts = []
    for k, name in enumerate(CLASSES):
        m = records.klass == k
        parts.append(
            summarize_class(
                name,
                records.ttft[m],
                records.admitted[m],
                records.deferred[m],
                wait[m],
                slo_s[k],
                duration_s,
                records.interrupted[m],
            )
        )
    slo_each = np.asarray(slo_s, dtype=np.float64)[records.klass]
    # overall attainment uses each request's own class SLO; an interrupted request is a miss
    completed = records.admitted & ~records.interrupted
    met = completed & (np.nan_to_num(records.ttft, nan=math.inf) <= slo_each)
    overall = summarize_class(
        "all",
        records.ttft,
        records.admitted,
        records.deferred,
        wait,
        math.inf,
        duration_s,
        records.interrupted,
    )
    n_met = int(met.sum())
    overall = replace(
        overall,
        slo_s=math.nan,
        met=n_met,
        slo_attainment=n_met / records.n if records.n else math.nan,
        goodput_rps=n_met / duration_s if duration_s > 0 else math.nan,
    )
    adm = records.admitted
    prompt = int(records.prompt_tokens[adm].sum())
    served = np.bincount(records.cluster[adm], minlength=clusters)[:clusters]
    return Summary(
        classes=tuple(parts),
        overall=overall,
        hit_rate=int(records.reused_tokens[adm].sum()) / prompt if prompt else math.nan,
        on_primary_rate=float(records.on_primary[adm].mean()) if adm.any() else math.nan,
        load=load_stats(served),
        served=tuple(int(s) for s in served),
    )


def naive_p95_with_rejections_as_sentinel(
    ttft: np.ndarray, admitted: np.ndarray, sentinel: float = SEED_SENTINEL
) -> float:
    """THE WRONG WAY, kept for teaching: P95 over admitted TTFTs plus `sentinel` per rejection."""
    adm = np.asarray(admitted, dtype=bool)
    lat = np.asarray(ttft, dtype=np.float64)
    mixed = np.concatenate([lat[adm], np.full(int((~adm).sum()), float(sentinel))])
    return percentile(mixed, 95.0)


def naive_p95_by_class(records: Records, sentinel: float = SEED_SENTINEL) -> tuple[float, ...]:
    """THE WRONG WAY, per CLASSES entry: naive_p95_with_rejections_as_sentinel of each class."""
    return tuple(
        naive_p95_with_rejections_as_sentinel(
            records.ttft[records.klass == k], records.admitted[records.klass == k], sentinel
        )
        for k in range(len(CLASSES))
    )

