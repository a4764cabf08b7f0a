"""Redraw benchmark: `python -m tabs.redraw_bench` prints P50 / P95 of a full redraw (figure
function + PNG) per figure, at the defaults and at the hero's demo value, against the 300 ms
budget of DESIGN.md. Each value is first rendered once untimed (engine caches warm), as a
slider revisiting a value would be; the first visit to a new value is timed separately."""

from __future__ import annotations

import argparse
import statistics
import time

from tabs.figure import freeze_heap, render_png
from tabs.registry import all_figures
from tabs.spec import render

BUDGET_MS = 300.0


def _redraw_ms(tab, fig, values: dict) -> float:
    t0 = time.perf_counter()
    render_png(render(fig, tab, values).figure)
    return (time.perf_counter() - t0) * 1e3


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=10, help="timed redraws per value (default 10)")
    args = ap.parse_args(argv)
    if args.repeat < 2:
        ap.error(f"--repeat must be >= 2, got {args.repeat}")
    for tab, fig in all_figures():  # warm imports and caches as build_app() does, then freeze
        render_png(render(fig, tab).figure)
    freeze_heap()
    print(f"{'figure':28} {'value':14} {'first':>8} {'P50':>8} {'P95':>8} {'P95/budget':>10}")
    worst = 0.0
    for tab, fig in all_figures():
        hero = tab.hero
        cases = [("defaults", {})]
        if hero.name in fig.params:
            cases.append((f"{hero.name}={hero.demo}", {hero.name: hero.demo}))
        for label, values in cases:
            first = _redraw_ms(tab, fig, values)
            times = sorted(_redraw_ms(tab, fig, values) for _ in range(args.repeat))
            p50 = statistics.median(times)
            p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
            worst = max(worst, p95)
            print(f"{fig.name:28} {label:14} {first:8.0f} {p50:8.0f} {p95:8.0f} "
                  f"{p95 / BUDGET_MS:10.2f}")
    print(f"worst P95: {worst:.0f} ms ({worst / BUDGET_MS:.2f} x the {BUDGET_MS:.0f} ms budget)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
