"""`python -m core.bench fleet` runs end to end at a tiny size and prints every table. No timing
asserts: speed is judged by the benchmark's own target column, not by the unit tier."""

from __future__ import annotations

from core.bench.fleet import main
from core.fleet.routers import ROUTERS


def test_quick_benchmark_prints_targets_and_tables(capsys):
    assert main(["--sizes", "2000,3000", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "3,000" in out and "Router bake-off" in out and "sentinel P95 (WRONG)" in out
    for router in ROUTERS:
        assert out.count(router) >= 2
