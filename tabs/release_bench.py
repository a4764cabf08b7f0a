"""Release-to-figure latency in chromium, this checkout against another, interleaved in one run.

`python -m tabs.release_bench --other DIR` serves this checkout's lab and the lab of the
checkout at DIR (e.g. a `git worktree` of main before a change) on two local ports, opens one
Debian chromium page on each, and then, --rounds times (20), for each of --tabs in turn and on
each server one after the other, presses ArrowRight on the tab's hero slider and times the
keypress to the moment the figure the hero moves most shows a new image. Every release asks for
a value neither server has drawn before (the hero climbs one step per round), so no render
cache answers it. Prints per tab and overall the P50 and P95 of each side and the P50 ratio
(the issue's bound: P50 may not grow by more than max(10%, 50 ms)).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
DEFAULT_TABS = ("fleet_ring", "paging", "replay_ring")  # heroes with >= 20 steps to climb


def _serve(repo: Path, port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "app.py", "--port", str(port)], cwd=repo,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(240):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
            return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"the lab in {repo} did not start on port {port}")


def _release(page, tab, hero, fig) -> float:
    img = f"#{fig}-plot [data-testid=matplotlib] img"
    before = page.locator(img).get_attribute("src")
    rng = page.locator(f"#{tab}-{hero} input[type=range]")
    rng.focus()
    t0 = time.perf_counter()
    rng.press("ArrowRight")
    page.wait_for_function("([s, b]) => { const i = document.querySelector(s);"
                           " return i && i.src !== b; }", arg=[img, before], timeout=60_000)
    return time.perf_counter() - t0


def _pick(times: dict[tuple[str, str], list[float]], side: str, row: str) -> list[float]:
    return [x for (t, s), xs in times.items() if s == side and row in (t, "all") for x in xs]


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--other", type=Path, required=True, help="the checkout to compare with")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--tabs", default=",".join(DEFAULT_TABS))
    a = ap.parse_args(argv)
    if not 1 <= a.rounds <= 200:
        ap.error(f"--rounds must be in [1, 200], got {a.rounds}")
    from playwright.sync_api import sync_playwright

    from tabs.registry import REGISTRY

    by_id = {t.id: t for t in REGISTRY}
    unknown = [t for t in a.tabs.split(",") if t not in by_id]
    if unknown:
        ap.error(f"--tabs: unknown tab ids {unknown}; known: {', '.join(by_id)}")
    tabs = [by_id[t] for t in a.tabs.split(",")]
    for t in tabs:
        h = t.hero
        if int((h.maximum - h.value) / h.step) < a.rounds:
            ap.error(f"--tabs: {t.id}'s hero {h.name} has fewer than {a.rounds} steps above its "
                     "default (every release must ask for a new value)")
    here = Path(__file__).resolve().parent.parent
    sides = {"this": (here, 7911), "other": (a.other.resolve(), 7912)}
    procs = {name: _serve(repo, port) for name, (repo, port) in sides.items()}
    times: dict[tuple[str, str], list[float]] = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            for tab in tabs:
                fig = tab.redraw_order(tab.hero.name)[0].name
                pages = {}
                for name, (_, port) in sides.items():
                    page = browser.new_page(viewport={"width": 1280, "height": 800})
                    page.goto(f"http://127.0.0.1:{port}/?tab={tab.id}")
                    page.locator(f"#{fig}-plot [data-testid=matplotlib] img").wait_for(
                        timeout=120_000)
                    time.sleep(2)  # the tab's other figures settle
                    pages[name] = page
                for r in range(a.rounds):
                    order = list(sides) if r % 2 == 0 else list(reversed(sides))
                    for name in order:
                        times.setdefault((tab.id, name), []).append(
                            _release(pages[name], tab.id, tab.hero.name, fig))
                        time.sleep(0.3)
                for page in pages.values():
                    page.close()
            browser.close()
    finally:
        for proc in procs.values():
            proc.kill()
    rows = [*(t.id for t in tabs), "all"]
    print(f"release -> main figure, {a.rounds} releases per tab and side, interleaved")
    print(f"{'tab':<16}{'this P50':>10}{'P95':>8}{'other P50':>11}{'P95':>8}{'ratio':>8}")
    for row in rows:
        mine, theirs = (_pick(times, side, row) for side in ("this", "other"))
        m, o = statistics.median(mine), statistics.median(theirs)
        print(f"{row:<16}{m:>10.3f}{_pct(mine, 0.95):>8.3f}{o:>11.3f}"
              f"{_pct(theirs, 0.95):>8.3f}{m / o:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
