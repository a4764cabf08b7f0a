"""`python -m core.bench routing --quick` runs end to end and prints every figure."""

from __future__ import annotations

from core.bench.__main__ import main


def test_bench_quick(capsys) -> None:
    assert main(["routing", "--quick", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    for label in ("select_experts", "topk", "max_rank", "cum_prob", "cache_prior", "naive twin",
                  "four arms", "stock", "routing", "prefetch", "both", "HDD", "NVMe"):
        assert label in out
