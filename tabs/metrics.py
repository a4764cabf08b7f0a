"""Metrics: canonical form for golden JSON (exact compare) and the small table beside a figure."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from tabs.figure import MetricValue

SIG_DIGITS = 6
ZERO_BELOW = 1e-12


def canonical_value(v: MetricValue) -> MetricValue:
    """Floats to 6 significant digits; magnitudes below 1e-12 become 0.0 (rounding noise)."""
    if isinstance(v, bool) or isinstance(v, int) or isinstance(v, str):
        return v
    f = float(v)
    if math.isnan(f) or math.isinf(f):
        return str(f)
    if abs(f) < ZERO_BELOW:
        return 0.0
    return float(f"{f:.{SIG_DIGITS}g}")


def canonical(metrics: Mapping[str, MetricValue]) -> dict[str, MetricValue]:
    return {k: canonical_value(metrics[k]) for k in sorted(metrics)}


def to_json(metrics: Mapping[str, MetricValue]) -> str:
    return json.dumps(canonical(metrics), indent=2, sort_keys=True) + "\n"


def _fmt(v: MetricValue) -> str:
    if isinstance(v, bool) or isinstance(v, str):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    f = float(v)
    if f == 0.0:
        return "0"
    if 1e-3 <= abs(f) < 1e6:
        return f"{f:,.4g}"
    return f"{f:.3e}"


def to_markdown(metrics: Mapping[str, MetricValue]) -> str:
    rows = "\n".join(f"| {k} | {_fmt(v)} |" for k, v in metrics.items())
    return "| metric | value |\n|---|---|\n" + rows
