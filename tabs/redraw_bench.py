"""Redraw benchmark: `python -m tabs.redraw_bench` prints P50 / P95 of a full redraw (figure
function + PNG) per figure at the defaults, at each preset and at the heaviest allowed settings
(every slider at its maximum), beside a reference figure measured in the same run: two panels
with one line each at the lab's usual size (what any plot costs here). The ratio P95 / the
reference's P95 is the number to watch (target <= 2.5x); times alone move with the machine.
The reference is redrawn right before each timed redraw and each case's ratio uses the
reference times of that case, so a busy spell slows both sides of the ratio alike. Each value
is first rendered once untimed (engine caches warm), as a slider revisiting a value would be;
that first visit is printed separately."""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from core.errors import ParamError
from tabs.controls import Slider
from tabs.figure import FigureResult, freeze_heap, lab_figure, render_png
from tabs.registry import all_figures
from tabs.spec import render

TARGET = 2.5  # P95 within this many reference P95s


def reference_figure() -> FigureResult:
    x = np.linspace(0, 1, 200)
    with lab_figure(3.6) as fig:
        ax, bx = fig.subplots(1, 2)
        ax.plot(x, x**2)
        bx.plot(x, np.sqrt(x))
        ax.set_title("reference a", loc="left")
        bx.set_title("reference b", loc="left")
    return FigureResult(fig, {"n": 200})


def _ms(draw) -> float:
    t0 = time.perf_counter()
    render_png(draw().figure)
    return (time.perf_counter() - t0) * 1e3


def _p(times: list[float], q: float) -> float:
    s = sorted(times)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def bench_cases(tab, fig) -> list[tuple[str, dict]]:
    """(label, values) of each case benched for one figure: defaults, each preset that sets one
    of its parameters, and every slider it reads at its maximum."""
    cases = [("defaults", {})]
    for p in tab.presets:
        if set(p.values) & set(fig.params):
            cases.append((f"preset: {p.name}", dict(p.values)))
    heavy = {c.name: (int(c.maximum) if c.integer else c.maximum) for c in tab.controls
             if isinstance(c, Slider) and c.name in fig.params and not c.max_from}
    if heavy:
        cases.append(("heaviest", heavy))
    return cases


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=10, help="timed redraws per value (default 10)")
    ap.add_argument("--only", help="comma-separated tab ids (default: every tab)")
    args = ap.parse_args(argv)
    if not 2 <= args.repeat <= 1000:
        ap.error(f"--repeat must be in [2, 1000], got {args.repeat}")
    chosen = all_figures()
    if args.only:
        wanted = set(args.only.split(","))
        chosen = [(t, f) for t, f in chosen if t.id in wanted]
    for tab, fig in chosen:  # warm imports and caches as a first visit does, then freeze
        render_png(render(fig, tab).figure)
    freeze_heap()
    ref = [_ms(reference_figure) for _ in range(max(args.repeat, 20))]
    ref95 = _p(ref, 0.95)
    print(f"reference figure (two panels, one line each): P50 {statistics.median(ref):.0f} ms, "
          f"P95 {ref95:.0f} ms\n")
    print(f"{'figure':28} {'case':34} {'first':>7} {'P50':>7} {'P95':>7} {'P95/ref':>8}"
          "   (ref: the reference's P95 in the same case)")
    worst, over = 0.0, []
    for tab, fig in chosen:
        for label, values in bench_cases(tab, fig):
            try:
                first = _ms(lambda v=values, f=fig, t=tab: render(f, t, v))
            except ParamError as e:  # a combination the tab rejects (e.g. linked maxima)
                print(f"{fig.name:28} {label[:34]:34} rejected: {e}")
                continue
            times, refs = [], []
            for _ in range(args.repeat):  # paired: reference, then the figure
                refs.append(_ms(reference_figure))
                times.append(_ms(lambda v=values, f=fig, t=tab: render(f, t, v)))
            p95 = _p(times, 0.95)
            ratio = p95 / _p(refs, 0.95)
            worst = max(worst, ratio)
            if ratio > TARGET:
                over.append(f"{fig.name} ({label})")
            print(f"{fig.name:28} {label[:34]:34} {first:7.0f} {statistics.median(times):7.0f} "
                  f"{p95:7.0f} {ratio:8.2f}")
    print(f"\nworst P95 ratio {worst:.2f}x the reference (target <= {TARGET}x); "
          f"{len(over)} cases over target" + (f": {', '.join(over)}" if over else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
