"""Release-to-figure times measured in chromium by the e2e tier, printed at the end of the run
(and written to test-results/e2e-timings.txt), never asserted: the machines are shared and
noisy. Targets (issue 14): the hero's main figure within 0.5 s and the whole tab within 1.5 s
at P95."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Release:
    tab: str
    figure: str  # the hero's main figure
    main_s: float  # release -> that figure shows the new value
    tab_s: float  # release -> every figure the hero moves shows it


RELEASES: list[Release] = []


def record_release(tab: str, figure: str, main_s: float, tab_s: float) -> None:
    RELEASES.append(Release(tab, figure, main_s, tab_s))


def _p(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def report() -> list[str]:
    if not RELEASES:
        return []
    lines = [f"{'tab':16} {'main figure':28} {'main s':>7} {'tab s':>7}"]
    lines += [f"{r.tab:16} {r.figure:28} {r.main_s:7.2f} {r.tab_s:7.2f}" for r in RELEASES]
    main, whole = [r.main_s for r in RELEASES], [r.tab_s for r in RELEASES]
    lines.append(f"hero release over {len(RELEASES)} tabs: main figure P50 {_p(main, 0.5):.2f} s, "
                 f"P95 {_p(main, 0.95):.2f} s (target 0.5 s); whole tab P50 "
                 f"{_p(whole, 0.5):.2f} s, P95 {_p(whole, 0.95):.2f} s (target 1.5 s)")
    return lines
