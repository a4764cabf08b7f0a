"""core.routing.speed: modelled seconds per token, against the formula written out by hand, for a
preset named and for a what-if Disk."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.experiments.routing import modelled_speed, setting
from core.routing.disk import DISKS
from core.routing.speed import io_seconds, tokens_per_s
from tabs.routing import TAB


@pytest.fixture(scope="module")
def arms():
    d = TAB.defaults()
    return setting(d["M"], d["J"], d["method"], d["alpha"], d["capacity"]).arms


def test_formula_by_hand(arms) -> None:
    rec, dk, compute, L = arms["prefetch"], DISKS["SATA SSD"], 2e-3, 8
    demand = (rec.demand_reads * dk.per_read + rec.demand_bytes / dk.bandwidth) / rec.positions
    late = sum(n * max(0.0, int(reads) * dk.per_read + nbytes / n / dk.bandwidth - compute / L)
               for reads, (n, nbytes) in rec.issues.items()) / rec.positions
    assert io_seconds(rec, "SATA SSD", compute, L) == pytest.approx((demand, late), rel=1e-12)
    assert tokens_per_s(rec, "SATA SSD", compute, L) == pytest.approx(
        1 / (compute + demand + late), rel=1e-12)


def test_a_disk_of_ones_own(arms) -> None:
    rec = arms["prefetch"]
    assert io_seconds(rec, DISKS["HDD"], 6e-3, 8) == io_seconds(rec, "HDD", 6e-3, 8)
    instant = replace(DISKS["HDD"], per_read=0.0, bandwidth=float("inf"))
    assert io_seconds(rec, instant, 6e-3, 8) == (0.0, 0.0)
    assert modelled_speed(rec, instant, 5e-3) == pytest.approx(200.0)
