"""The queueing experiment against queueing theory: an open loop at load rho against M/M/1's
closed forms, a closed loop against the interactive response time law N = X (R + Z)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.errors import ParamError
from core.experiments.queueing import closed_loop, mm1_p95, mm1_wait, open_loop

STAT_REL = 0.06  # 200,000 requests: a few percent of sampling error at rho <= 0.8


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_open_loop_meets_mm1(rho):
    run = open_loop(rho, 200_000, 1)
    assert run.mean_wait == pytest.approx(rho / (1 - rho), rel=STAT_REL)
    assert run.p95_system == pytest.approx(math.log(20) / (1 - rho), rel=STAT_REL)
    assert run.throughput == pytest.approx(rho, rel=0.02)  # stable: all offered is served
    assert mm1_wait(rho) == pytest.approx(rho / (1 - rho))
    assert mm1_p95(rho) == pytest.approx(-math.log(0.05) / (1 - rho))


def test_closed_loop_obeys_the_response_time_law():
    clients, think = 12, 10.0
    run = closed_loop(clients, think, 20_000, 3)
    # N = X (R + Z): R the mean time in system = mean wait + mean service (1)
    assert clients == pytest.approx(run.throughput * (run.mean_wait + 1.0 + think), rel=0.05)
    assert run.throughput <= 1.02  # one server answers at most one request per service time


def test_overload_has_no_steady_state():
    early, late = (open_loop(1.2, n, 2).mean_wait for n in (2_000, 20_000))
    assert late > 5 * early  # the queue grows with the run


@pytest.mark.parametrize(("call", "name"), [
    (lambda: open_loop(0.0, 10, 0), "rho"), (lambda: open_loop(0.5, 1, 0), "n"),
    (lambda: closed_loop(0, 1.0, 10, 0), "clients"), (lambda: mm1_wait(1.0), "rho")])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ParamError, match=name):
        call()


def test_seeded():
    assert open_loop(0.7, 1000, 5) == open_loop(0.7, 1000, 5)
    assert np.isfinite(closed_loop(3, 2.0, 500, 1).p95_system)
