"""Load benchmark: `python -m tabs.load_bench` serves the lab on 127.0.0.1 and drives it with
concurrent gradio_client sessions, in two scenarios, each on a fresh server (an empty render
cache) whose once-only sweeps are already computed (tabs/warm.py):

  class   a room following its lecturer: --class-sessions (30) sessions step through every
          tab's presets in registry order, calling each figure of the tab at each preset, each
          session --lag seconds (0.5) behind the one before. Target: P95 <= 1 s per call.
          --prerendered: the server first renders the lecture (tabs/warm.py prerender_lecture,
          as `python app.py --class` does after its start), so the class meets a cache that
          holds its path; without it the first session renders each figure as it goes.
  random  --sessions (20) sessions making --calls (10) random valid figure calls each across
          every tab (defaults, a preset, or one control at its demo value). Target: no session
          starves (per-session medians within 2x of each other). Printed over all calls and
          over the calls that waited for a render (waited_for_a_render): over all calls a
          session whose calls happen to repeat another's is answered from the cache in
          milliseconds, so that spread measures luck in the draw of calls; over the calls
          that waited for a render each session's median is the same kind of work.

The sessions run in client processes of their own (`--drive`, --per-process sessions each, as
threads), as a room's browsers would, so that no client waits on another's interpreter lock
nor on the server's. On one 2-core machine the clients still share the cores with the server,
which a room's laptops would not: the numbers are an upper bound, and each scenario prints the
CPU a call cost the server and the client processes. The clients are gradio_client sessions
whose requests share one SSL context (tabs/bench_client.py: gradio_client's default built one a
request, 38-40 ms of client CPU a call here, which a browser never spends; one session alone on
render-cache hits: client 2.5 ms of CPU a call, P50 53 ms).
`--serve N` measures the Serve tab instead (tabs/serve_load.py). Printed per scenario: errors
(target 0), P50 / P95 latency over all calls, per-session
medians, and the render cache's hits and misses. Then, in process: for every figure at its
defaults, a render against a cache hit (median of 5 hits; target: a hit <= 5% of the render).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from tabs.registry import REGISTRY, all_figures

Call = tuple[str, list[object]]  # (api name, positional values)


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


def random_calls(seed: int, calls: int) -> list[Call]:
    rng = random.Random(seed)
    out = []
    for _ in range(calls):
        tab = rng.choice(REGISTRY)
        fig = rng.choice(tab.figures)
        values = _values(tab, rng)
        out.append((fig.name, [values[p] for p in fig.params]))
    return out


def lecture_calls() -> list[Call]:
    """Every tab's presets in registry order, every figure of the tab at each."""
    out = []
    for tab in REGISTRY:
        for preset in tab.presets:
            values = {**tab.defaults(), **preset.values}
            out += [(f.name, [values[p] for p in f.params]) for f in tab.figures]
    return out


def session(url: str, calls: list[Call], delay_s: float = 0.0
            ) -> tuple[list[float], list[str], list[float]]:
    """(each call's seconds, errors, each call's start on the host's clock)."""
    from tabs.bench_client import bench_client

    time.sleep(delay_s)
    client = bench_client(url)
    times, errors, starts = [], [], []
    try:
        for name, values in calls:
            starts.append(time.time())
            t0 = time.perf_counter()
            try:
                client.predict(*values, api_name=f"/{name}")
            except Exception as e:  # noqa: BLE001 (counted and printed, never hidden)
                errors.append(f"{name}: {type(e).__name__}: {e}")
            times.append(time.perf_counter() - t0)
    finally:
        client.close()
    return times, errors, starts


def waited_for_a_render(plans: list[list[Call]], runs: list) -> list[list[bool]]:
    """Per session and call: did it wait for a render (its own, or one in flight it joined)?
    Read from the clients' clocks: the first call of a (figure, values) renders, a call of the
    same key that starts before that render's call ends joins it, a later one is a hit."""
    first: dict[str, tuple[float, float]] = {}  # key -> (start, end) of its first call
    for calls, (times, _, starts) in zip(plans, runs, strict=True):
        for (name, values), t, s in zip(calls, times, starts, strict=True):
            key = json.dumps([name, values])
            if key not in first or s < first[key][0]:
                first[key] = (s, s + t)
    return [[starts[i] < first[json.dumps([n, v])][1] for i, (n, v) in enumerate(calls)]
            for calls, (_, _, starts) in zip(plans, runs, strict=True)]


def _rendering(plans: list[list[Call]], runs: list) -> str:
    """Per-session medians over the calls that waited for a render: the same kind of work in
    every session, where the medians over all calls also count each session's cache hits."""
    waited = waited_for_a_render(plans, runs)
    m = sorted(statistics.median(t for t, w in zip(ts, ws, strict=True) if w)
               for (ts, _, _), ws in zip(runs, waited, strict=True) if any(ws))
    return (f", over the calls that waited for a render {m[0]:.3f}-{m[-1]:.3f} s "
            f"({m[-1] / m[0]:.2f}x, {len(m)} sessions)") if m else ""


def run_scenario(name: str, plans: list[tuple[list[Call], float]], per_process: int,
                 prerendered: bool = False) -> tuple[str, list]:
    """Serve a fresh lab (empty render cache, or the lecture pre-rendered), run every plan as
    a session at once."""
    from app import build_app, launch_kwargs
    from tabs.render_cache import RENDERS
    from tabs.warm import prerender_lecture

    RENDERS.clear()
    if prerendered:
        n, seconds = prerender_lecture()
        print(f"{name}: pre-rendered the lecture, {n} figures in {seconds:.1f} s", flush=True)
    before = RENDERS.stats()
    demo = build_app()
    _, url, _ = demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True,
                            **launch_kwargs())
    try:
        t0, cpu0 = time.perf_counter(), os.times()
        groups = [plans[i:i + per_process] for i in range(0, len(plans), per_process)]
        procs = [subprocess.Popen([sys.executable, "-m", "tabs.load_bench", "--drive", url],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                 for _ in groups]
        for proc, group in zip(procs, groups, strict=True):
            proc.stdin.write(json.dumps(group))
            proc.stdin.close()
        runs = [run for proc in procs
                for run in json.loads(proc.stdout.read().strip().splitlines()[-1])]
        for proc in procs:
            if proc.wait() != 0:
                raise SystemExit("a client process failed")
        wall, cpu1 = time.perf_counter() - t0, os.times()
    finally:
        demo.close()
    after = RENDERS.stats()
    times = sorted(t for ts, _, _ in runs for t in ts)
    errors = [e for _, es, _ in runs for e in es]
    medians = sorted(statistics.median(ts) for ts, _, _ in runs)
    rendering = "" if prerendered else _rendering([calls for calls, _ in plans], runs)
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    server = (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / len(times)
    clients = (cpu1.children_user + cpu1.children_system
               - cpu0.children_user - cpu0.children_system) / len(times)
    line = (f"{name}: {len(plans)} sessions, {len(times)} calls in {wall:.1f} s: errors "
            f"{len(errors)}, P50 {statistics.median(times):.3f} s, P95 {p95:.3f} s; per-session "
            f"medians {medians[0]:.3f}-{medians[-1]:.3f} s ({medians[-1] / medians[0]:.2f}x)"
            f"{rendering}; "
            f"render cache {after.hits - before.hits} hits, {after.misses - before.misses} "
            f"renders, {after.joins - before.joins} joined a render in flight; CPU per call: "
            f"server {server * 1e3:.1f} ms, client processes {clients * 1e3:.1f} ms")
    return line, errors


def hit_against_render(repeat: int = 5) -> list[tuple[str, float, float]]:
    """(figure, render s, hit s) at the defaults, measured in this process."""
    from tabs.render_cache import RENDERS, render_now, rendered
    from tabs.spec import validated

    out = []
    for tab, fig in all_figures():
        params = validated(fig.params, tab, None)
        t0 = time.perf_counter()
        render_now(fig, params, False)
        render_s = time.perf_counter() - t0
        rendered(fig, tab)  # cached now
        hits = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            rendered(fig, tab)
            hits.append(time.perf_counter() - t0)
        out.append((fig.name, render_s, statistics.median(hits)))
    RENDERS.clear()
    return out


def drive(url: str) -> None:
    """The client process: plans (JSON on stdin) as concurrent sessions; results as JSON."""
    plans = json.loads(sys.stdin.read())
    with ThreadPoolExecutor(len(plans)) as pool:
        runs = list(pool.map(lambda p: session(url, *p), plans))
    print(json.dumps(runs))


def main(argv: list[str] | None = None) -> int:
    if argv and argv[0] == "--drive":
        drive(argv[1])
        return 0
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", choices=("both", "class", "random"), default="both")
    ap.add_argument("--sessions", type=int, default=20, help="random: sessions (20)")
    ap.add_argument("--calls", type=int, default=10, help="random: calls per session (10)")
    ap.add_argument("--class-sessions", type=int, default=30, help="class: sessions (30)")
    ap.add_argument("--lag", type=float, default=0.5, help="class: seconds between sessions")
    ap.add_argument("--prerendered", action="store_true",
                    help="class: the server pre-renders the lecture first (as --class does)")
    ap.add_argument("--per-process", type=int, default=5,
                    help="sessions per client process (5)")
    ap.add_argument("--serve", type=int, metavar="N",
                    help="the Serve tab instead: N sessions generating at once through one class "
                    "engine, against one session alone and against no page (tabs/serve_load.py)")
    a = ap.parse_args(argv)
    for flag, v in (("--sessions", a.sessions), ("--calls", a.calls),
                    ("--class-sessions", a.class_sessions), ("--per-process", a.per_process)):
        if not 1 <= v <= 100:
            ap.error(f"{flag} must be in [1, 100], got {v}")
    if not 0 <= a.lag <= 10:
        ap.error(f"--lag must be in [0, 10] seconds, got {a.lag}")
    if a.serve is not None:
        if not 1 <= a.serve <= 100:
            ap.error(f"--serve must be in [1, 100] sessions, got {a.serve}")
        from tabs.serve_load import run

        return run(a.serve)
    from tabs.warm import warm_all

    warm_all()  # the once-only sweeps: both scenarios start from a warmed server
    scenarios: list[tuple[str, Callable[[], list[tuple[list[Call], float]]]]] = []
    if a.scenario in ("both", "class"):
        lecture = lecture_calls()
        scenarios.append(("class", lambda: [(lecture, i * a.lag)
                                            for i in range(a.class_sessions)]))
    if a.scenario in ("both", "random"):
        scenarios.append(("random", lambda: [(random_calls(s, a.calls), 0.0)
                                             for s in range(a.sessions)]))
    failed = False
    for name, plans in scenarios:
        line, errors = run_scenario(name, plans(), a.per_process,
                                    prerendered=a.prerendered and name == "class")
        print(line, flush=True)
        for e in errors[:10]:
            print("  error:", e)
        failed |= bool(errors)
    rows = hit_against_render()
    worst = max(rows, key=lambda r: r[2] / r[1])
    print(f"cache hit vs render at the defaults, {len(rows)} figures: worst "
          f"{worst[0]} {worst[2] * 1e3:.2f} ms vs {worst[1] * 1e3:.0f} ms "
          f"({worst[2] / worst[1]:.2%}; target <= 5%); median hit "
          f"{statistics.median(r[2] for r in rows) * 1e3:.3f} ms")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
