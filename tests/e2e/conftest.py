"""Prints the chromium release timings the e2e tier measured (tests/e2e/timing.py)."""

from __future__ import annotations

from tests.conftest import RESULTS
from tests.e2e.timing import report


def pytest_terminal_summary(terminalreporter) -> None:
    lines = report()
    if not lines:
        return
    terminalreporter.section("chromium: hero release -> figures (measured, not asserted)")
    for line in lines:
        terminalreporter.write_line(line)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "e2e-timings.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
