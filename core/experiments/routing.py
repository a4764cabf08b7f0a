"""The Cache-aware routing tab's experiment: its controls read against the precomputed sweep
(routing_sweep.py), and the one measurement its live panel takes.

  sweep(capacity)   the sweep at one capacity (assets/routing), loaded once (read-only)
  setting(M, J, method, alpha, capacity)   Setting: the controls validated against the grid
                    (ParamError names the control; capacity is a choice, sent as text) and the
                    sweep's passes they select
  choice(setting)   MomentChoice: the setting's selection for the sweep's one recorded token and
                    layer (the rank strip's), with its weights before and after alpha
  curve(sweep, method, J, alpha)   the routing arm's Points as the window M sweeps (M = k: stock)
  every_setting(sweep)   each distinct routed setting's Point once (stock first)
  step_seconds(on_round)   median wall time of one decode step of the shipped model, all
                    experts resident, timed now over STEPS steps (never cached)
  modelled_speed(record, disk, compute_s)   an arm's tokens/s under a disk (a preset name or
                    a what-if Disk) with an assumed compute per token (ASSUMED_STEP_S): the
                    lesson's numbers, deterministic, unlike the live panel's measured ones
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from core.errors import ParamError
from core.experiments.flight import single_flight
from core.experiments.routing_grid import (
    ALPHAS,
    CAPACITIES,
    DIMS,
    TAB_METHODS,
    WINDOWS,
    lam_of,
    tab_route,
)
from core.experiments.routing_sweep import CapacitySweep, load
from core.experiments.shipped import model
from core.routing.config import KINDS, RouteConfig
from core.routing.disk import Disk
from core.routing.record import PassRecord
from core.routing.select import prior_lift, select_experts
from core.routing.speed import tokens_per_s

STEPS = 12  # decode steps timed (all experts resident: compute only)
# Compute of one decode step assumed by the lesson's speed model: about what one step of this
# model takes on one laptop core (the live panel measures the real one, which varies).
ASSUMED_STEP_S = 6e-3


@single_flight(len(CAPACITIES))
def sweep(capacity: int) -> CapacitySweep:
    return load(capacity)


@dataclass(frozen=True, kw_only=True)
class Setting:
    """The controls, validated, and what they select."""

    method: str
    M: int
    J: int
    alpha: float
    capacity: int
    route: RouteConfig
    sweep: CapacitySweep

    @property
    def arms(self) -> dict[str, PassRecord]:
        return self.sweep.arms(self.route)

    def words(self) -> str:
        """The setting in a few words, for titles."""
        if self.route.stock:
            return "stock top-k (no substitutes)"
        if self.method == "cache_prior":
            return f"cache_prior λ = {self.route.lam:.2f}"
        a = "" if self.alpha == 1.0 else f", α = {self.alpha:g}"
        return f"max_rank J = {self.J}, M = {self.M}{a}"


def capacity_of(capacity: object) -> int:
    """The capacity control's value (a choice, sent as text) as slots."""
    names = [str(c) for c in CAPACITIES]
    if str(capacity) not in names:
        raise ParamError(f"capacity must be one of {names}, got {capacity!r}")
    return int(str(capacity))


def setting(M: int, J: int, method: str, alpha: float, capacity: object) -> Setting:
    if M not in WINDOWS:
        raise ParamError(f"M must be one of {list(WINDOWS)}, got {M!r}")
    if J not in range(DIMS.top_k + 1):
        raise ParamError(f"J must be in [0, {DIMS.top_k}], got {J!r}")
    if method not in TAB_METHODS:
        raise ParamError(f"method must be one of {list(TAB_METHODS)}, got {method!r}")
    if alpha not in ALPHAS:
        raise ParamError(f"alpha must be one of {list(ALPHAS)}, got {alpha!r}")
    cap = capacity_of(capacity)
    route = tab_route(method, M, J, float(alpha), DIMS)
    return Setting(method=method, M=M, J=J, alpha=float(alpha), capacity=cap, route=route,
                   sweep=sweep(cap))


@dataclass(frozen=True, slots=True, kw_only=True)
class MomentChoice:
    """What a setting chooses for the sweep's recorded moment (one token, one layer)."""

    ids: tuple[int, ...]  # the k chosen experts, in the selection's order
    kinds: tuple[str, ...]  # each one's kind (core.routing.config.KINDS)
    before: tuple[float, ...]  # their router scores renormalised (stock's weights for them)
    after: tuple[float, ...]  # the weights the setting mixes them with
    swaps: int
    window: int
    log_lift: float  # cache_prior: the log-score bonus of every resident (0 otherwise)


def choice(s: Setting) -> MomentChoice:
    """The stock or cache-aware selection the setting makes at the sweep's recorded moment."""
    mo = s.sweep.moment
    scores = torch.tensor(mo.scores, dtype=torch.float32)[None]  # [1, E]
    resident = torch.tensor(mo.resident, dtype=torch.bool)  # [E]
    sel = select_experts(scores, resident, s.route)
    ids = tuple(int(e) for e in sel.ids[0])
    picked = scores[0, list(ids)]  # [k]
    lift = float(prior_lift(scores, s.route.lam)[1][0, 0]) if s.route.method == "cache_prior" \
        else 0.0
    return MomentChoice(ids=ids, kinds=tuple(KINDS[int(c)] for c in sel.kind[0]),
                        before=tuple((picked / picked.sum()).tolist()),
                        after=tuple(sel.weights[0].tolist()), swaps=int(sel.swaps[0]),
                        window=int(sel.window[0]), log_lift=lift)


@dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    method: str
    J: int
    M: int
    alpha: float
    lam: float
    record: PassRecord  # the routing arm (no prefetch); stock at M = k


def curve(sw: CapacitySweep, method: str, J: int, alpha: float) -> list[Point]:
    out = []
    for M in WINDOWS:
        route = tab_route(method, M, J, alpha, DIMS)
        rec = sw.arms(route)["routing"]
        lam = lam_of(M, DIMS) if method == "cache_prior" else 0.0
        out.append(Point(method=method, J=J, M=M, alpha=alpha, lam=lam, record=rec))
    return out


def every_setting(sw: CapacitySweep) -> list[Point]:
    seen: dict[str, Point] = {}
    for method in TAB_METHODS:
        for J in range(DIMS.top_k + 1):
            for alpha in ALPHAS:
                for p in curve(sw, method, J, alpha):
                    key = tab_route(method, p.M, J, alpha, DIMS).label()
                    seen.setdefault(key, p)
    return list(seen.values())


@torch.no_grad()
def step_seconds(on_round: Callable[[int, int], None] | None = None) -> float:
    """`on_round(done, STEPS)` is called before each step and once at the end (progress)."""
    m = model()
    state = m.new_state(1)
    times = []
    for i, b in enumerate(b"def count(items):\n"[:STEPS]):
        if on_round is not None:
            on_round(i, STEPS)
        t0 = time.perf_counter()
        m.step(torch.tensor([b]), state)
        times.append(time.perf_counter() - t0)
    if on_round is not None:
        on_round(STEPS, STEPS)
    return statistics.median(times)


def modelled_speed(record: PassRecord, disk: str | Disk, compute_s: float = ASSUMED_STEP_S
                   ) -> float:
    """Modelled decode tokens/s of a recorded arm (core.routing.speed) at compute_s a token."""
    return tokens_per_s(record, disk, compute_s, DIMS.n_layers)
