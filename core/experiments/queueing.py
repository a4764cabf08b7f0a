"""Queueing, for the fleet tab: why a P95 blows up well before 100% load, and why a load test
must offer its load open loop.

One server, first come first served, exponential service times of mean 1 (every time here is
in service times), simulated request by request (numpy, seeded):
  open_loop(rho, n, seed)   n requests arriving as a Poisson stream at rate rho, whatever the
                            server does: the load is rho. Theory (M/M/1) for rho < 1: mean wait
                            in queue rho / (1 - rho), time in system exponential with rate
                            1 - rho, so its P95 is ln(20) / (1 - rho).
  closed_loop(clients, think, n, seed)   `clients` users, each sending a request, waiting for
                            its answer, then thinking an exponential `think` before the next:
                            the demand is clients / think requests per service time if the
                            server answered at once, but a slow server slows the arrivals.
Both return a QueueRun: requests, the arrival span, mean wait, P95 time in system, and the
throughput (requests answered per service time).

Closed-form helpers: mm1_wait(rho), mm1_p95(rho).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from core.errors import check_float, check_int
from core.experiments.flight import single_flight


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueRun:
    requests: int
    span: float  # from the first arrival to the last departure
    mean_wait: float  # time in queue, before service
    p95_system: float  # P95 of time in system (wait + service)
    throughput: float  # requests answered per service time

    @property
    def arrival_rate(self) -> float:
        return self.requests / self.span


def mm1_wait(rho: float) -> float:
    rho = check_float("rho", rho, 0.0, 0.999999)
    return rho / (1 - rho)


def mm1_p95(rho: float) -> float:
    rho = check_float("rho", rho, 0.0, 0.999999)
    return math.log(20) / (1 - rho)


def _run(arrivals: np.ndarray, service: np.ndarray) -> QueueRun:
    start = np.empty_like(arrivals)
    free = 0.0
    for i, (a, s) in enumerate(zip(arrivals, service, strict=True)):
        start[i] = max(a, free)
        free = start[i] + s
    done = start + service
    span = float(done[-1] - arrivals[0])
    return QueueRun(requests=len(arrivals), span=span,
                    mean_wait=float(np.mean(start - arrivals)),
                    p95_system=float(np.percentile(done - arrivals, 95)),
                    throughput=len(arrivals) / span)


@single_flight(32)
def open_loop(rho: float, n: int, seed: int) -> QueueRun:
    rho = check_float("rho", rho, 1e-6, 100.0)
    n = check_int("n", n, 2, 10**7)
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1 / rho, n))  # (n,)
    return _run(arrivals, rng.exponential(1.0, n))


@single_flight(32)
def closed_loop(clients: int, think: float, n: int, seed: int) -> QueueRun:
    clients = check_int("clients", clients, 1, 10**6)
    think = check_float("think", think, 0.0, 1e6)
    n = check_int("n", n, 2, 10**7)
    rng = np.random.default_rng(seed)
    ready = [(float(rng.exponential(think)), c) for c in range(clients)]  # (send time, client)
    heapq.heapify(ready)
    free = 0.0
    arrivals, starts, services = [], [], []
    for _ in range(n):
        a, c = heapq.heappop(ready)
        s = float(rng.exponential(1.0))
        start = max(a, free)
        free = start + s
        arrivals.append(a)
        starts.append(start)
        services.append(s)
        heapq.heappush(ready, (free + float(rng.exponential(think)), c))  # answered: think
    arr, st, sv = (np.array(x) for x in (arrivals, starts, services))
    order = np.argsort(arr, kind="stable")
    done = st + sv
    span = float(done.max() - arr.min())
    return QueueRun(requests=n, span=span, mean_wait=float(np.mean(st - arr)),
                    p95_system=float(np.percentile((done - arr)[order], 95)),
                    throughput=n / span)
