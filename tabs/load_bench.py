"""Load benchmark: `python -m tabs.load_bench` starts the lab on 127.0.0.1 and runs N
concurrent gradio_client sessions (default 20), each making M random valid figure calls
(default 10) across every tab: values drawn from each control's default, demo and presets.
Prints errors (target 0), P50 / P95 latency over all calls, and per session the median, so a
starved session shows (fair queueing: the slowest session's median near the others')."""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from tabs.registry import REGISTRY


def _values(tab, rng: random.Random) -> dict[str, object]:
    """A valid setting: defaults, a preset, or one control at its demo value."""
    pick = rng.random()
    if tab.presets and pick < 0.4:
        return {**tab.defaults(), **rng.choice(tab.presets).values}
    values = tab.defaults()
    movable = [c for c in tab.controls if getattr(c, "demo", None) is not None
               and not getattr(c, "max_from", None)]
    if movable and pick < 0.8:
        c = rng.choice(movable)
        values[c.name] = c.demo
    return values


def session(url: str, seed: int, calls: int) -> tuple[list[float], list[str]]:
    from gradio_client import Client

    rng = random.Random(seed)
    client = Client(url, verbose=False)
    times, errors = [], []
    try:
        for _ in range(calls):
            tab = rng.choice(REGISTRY)
            fig = rng.choice(tab.figures)
            values = _values(tab, rng)
            t0 = time.perf_counter()
            try:
                client.predict(*[values[p] for p in fig.params], api_name=f"/{fig.name}")
            except Exception as e:  # noqa: BLE001 (counted and printed, never hidden)
                errors.append(f"{fig.name}: {type(e).__name__}: {e}")
            times.append(time.perf_counter() - t0)
    finally:
        client.close()
    return times, errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--calls", type=int, default=10)
    a = ap.parse_args(argv)
    if not 1 <= a.sessions <= 100 or not 1 <= a.calls <= 100:
        ap.error(f"--sessions and --calls must be in [1, 100], got {a.sessions}, {a.calls}")
    from app import build_app, launch_kwargs

    demo = build_app()
    _, url, _ = demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True,
                            **launch_kwargs())
    try:
        t0 = time.perf_counter()
        with ThreadPoolExecutor(a.sessions) as pool:
            runs = list(pool.map(lambda s: session(url, s, a.calls), range(a.sessions)))
        wall = time.perf_counter() - t0
    finally:
        demo.close()
    times = sorted(t for ts, _ in runs for t in ts)
    errors = [e for _, es in runs for e in es]
    medians = sorted(statistics.median(ts) for ts, _ in runs)
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    print(f"{a.sessions} sessions x {a.calls} calls in {wall:.1f} s: errors {len(errors)}, "
          f"P50 {statistics.median(times):.2f} s, P95 {p95:.2f} s; per-session medians "
          f"{medians[0]:.2f}-{medians[-1]:.2f} s")
    for e in errors[:10]:
        print("  error:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
