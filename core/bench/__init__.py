"""Benchmarks: `python -m core.bench NAME` prints side-by-side ratios measured in one run."""
