"""Axis helpers shared by the figures."""

from __future__ import annotations

import math

from matplotlib.axis import Axis
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator


def plain_log(axis: Axis, lo: float, hi: float, base: int = 10, every: int = 1) -> None:
    """Log-scale ticks at every `every`-th power of `base` in [lo, hi], labelled as plain text.

    The default log formatter typesets every label with mathtext, which cost ~100 ms a redraw.
    """
    first, last = math.floor(math.log(lo, base) + 1e-9), math.ceil(math.log(hi, base) - 1e-9)
    axis.set_major_locator(FixedLocator([base**e for e in range(first, last + 1, every)]))
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())

    def label(x: float, _pos: int) -> str:
        e = round(math.log(x, base))
        if base == 2:
            return f"{x:,.0f}" if e >= 0 else f"2^{e}"
        return f"{x:g}" if -3 <= e <= 4 else f"1e{e}"

    axis.set_major_formatter(FuncFormatter(label))
