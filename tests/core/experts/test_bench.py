"""`python -m core.bench experts --quick` runs end to end and prints every figure."""

from __future__ import annotations

from core.bench.__main__ import main


def test_bench_quick(capsys) -> None:
    assert main(["experts", "--quick"]) == 0
    out = capsys.readouterr().out
    for label in ("get() hits", "sequential read", "get_many read", "get_many / sequential",
                  "LRU replay"):
        assert label in out
