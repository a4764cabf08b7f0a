"""Fleet simulator benchmark: simulated requests per second against the targets, plus the
router bake-off and the budget comparison on the lab's seeded demo traces.

    python -m core.bench fleet                 # 100k and 1M requests, then the tables
    python -m core.bench fleet --quick         # 10k and 100k (a smoke run)

The simulator is single-threaded Python, so every number here is one core's.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import replace

from core.bench.timing import best_of
from core.fleet.bakeoff import compare_routers
from core.fleet.config import DEMO_BUDGET, DEMO_SIM, DEMO_TRACE, SimConfig
from core.fleet.metrics import naive_p95_by_class
from core.fleet.result import SimResult
from core.fleet.routers import ROUTERS
from core.fleet.simulator import simulate
from core.fleet.traces import TraceConfig, long_burst_trace, multi_turn_trace

TARGETS_S = {100_000: 2.0, 1_000_000: 20.0}  # requests -> seconds, from the issue


def _f(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _throughput(sizes: list[int], router: str, repeat: int) -> None:
    print(
        f"Throughput (router={router}, {DEMO_SIM.clusters} clusters x {DEMO_SIM.slots} slots, "
        f"trace = TraceConfig(rate={DEMO_TRACE.rate}, seed=0) at n requests)"
    )
    print(
        f"  {'requests':>10}  {'trace gen':>9}  {'simulate':>9}  {'target':>8}  "
        f"{'req/s':>9}  {'target req/s':>12}  status"
    )
    for n in sizes:
        t0 = time.perf_counter()
        trace = multi_turn_trace(TraceConfig(n_requests=n))
        gen = time.perf_counter() - t0
        cfg = SimConfig(router=router)
        runs = repeat if n <= 100_000 else 1
        sim = best_of(lambda cfg=cfg, trace=trace: simulate(trace, cfg), repeat=runs, warmup=0)
        target = TARGETS_S.get(n)
        tgt = f"<= {target:g} s" if target else "-"
        tgt_rate = f"{n / target:,.0f}" if target else "-"
        status = ("ok" if sim <= target else "MISSED") if target else "-"
        print(
            f"  {n:>10,}  {gen:>8.2f}s  {sim:>8.2f}s  {tgt:>8}  {n / sim:>9,.0f}  "
            f"{tgt_rate:>12}  {status}"
        )


def _per_router(n: int) -> None:
    trace = multi_turn_trace(TraceConfig(n_requests=n))
    print(f"\nSimulation speed per router ({n:,} requests, one run each)")
    for router in ROUTERS:
        t0 = time.perf_counter()
        simulate(trace, SimConfig(router=router))
        dt = time.perf_counter() - t0
        print(f"  {router:<13} {dt:6.2f} s  {n / dt:>9,.0f} req/s")


def _bake_off() -> None:
    trace = multi_turn_trace(DEMO_TRACE)
    t0 = time.perf_counter()
    results = compare_routers(trace, DEMO_SIM)
    dt = time.perf_counter() - t0
    print(
        f"\nRouter bake-off: DEMO_TRACE ({trace.n:,} requests, {trace.duration:.0f} s, seed "
        f"{DEMO_TRACE.seed}), DEMO_SIM ({DEMO_SIM.clusters} clusters, cluster "
        f"{DEMO_SIM.fail_cluster} fails at {DEMO_SIM.fail_at:g} s, rejoins at "
        f"{DEMO_SIM.recover_at:g} s); SLO short {DEMO_SIM.slo_s[0]:g} s, long "
        f"{DEMO_SIM.slo_s[1]:g} s; 5 runs in {dt * 1000:.0f} ms"
    )
    print("  TTFT in seconds, over admitted requests only; recovery: of the short class's P95")
    head = (
        f"  {'router':<13} {'hit':>5} {'short P50/P95/P99':>18} {'long P50/P95/P99':>18} "
        f"{'SLO':>6} {'rej':>4} {'load CV':>7} {'max/mean':>8} {'moved':>5} "
        f"{'lost tok':>8} {'recovery':>8}"
    )
    print(head)
    for router, res in results.items():
        print(_bake_off_row(router, res))


def _bake_off_row(router: str, res: SimResult) -> str:
    s, fo = res.summary, res.failover
    short, long_ = s.by_class("short"), s.by_class("long")
    pct = [f"{_f(c.p50)}/{_f(c.p95)}/{_f(c.p99)}" for c in (short, long_)]
    if fo is None:
        rec = "n/a"
    elif fo.recovery_time_s is None:  # short P95 still high when the cluster rejoined (or at end)
        end = fo.recover_at if fo.recover_at is not None else res.records.arrival[-1]
        rec = f"> {end - fo.fail_at:.0f} s"
    elif math.isnan(fo.recovery_time_s):  # no short request before the failure to compare with
        rec = "n/a"
    else:
        rec = f"{fo.recovery_time_s:.0f} s"
    moved = fo.sessions_moved if fo else 0
    lost = fo.cache_lost_tokens if fo else 0
    return (
        f"  {router:<13} {_f(s.hit_rate):>5} {pct[0]:>18} {pct[1]:>18} "
        f"{_f(s.overall.slo_attainment, 3):>6} {s.overall.rejected:>4} {_f(s.load.cv, 3):>7} "
        f"{_f(s.load.max_over_mean):>8} {moved:>5} {lost:>8} {rec:>8}"
    )


def _budgets() -> None:
    trace = long_burst_trace()
    print(
        f"\nBudgets on long_burst_trace ({trace.n:,} requests: steady short, long burst at "
        f"10-20 s), router least_loaded, budgets (short, long) = {DEMO_BUDGET.budgets}, "
        f"weights {DEMO_BUDGET.weights}"
    )
    print(
        f"  {'mode':<7} {'class':<6} {'offered':>7} {'rej':>4} {'deferred':>8} {'n':>5} "
        f"{'P95 (admitted)':>14} {'SLO':>6} {'goodput/s':>9} {'sentinel P95 (WRONG)':>20}"
    )
    for mode in ("off", "reject", "queue"):
        res = simulate(
            trace, SimConfig(router="least_loaded", budget=replace(DEMO_BUDGET, mode=mode))
        )
        naive_p95s = naive_p95_by_class(res.records)
        for c, naive in zip(res.summary.classes, naive_p95s, strict=True):
            print(
                f"  {mode:<7} {c.name:<6} {c.offered:>7} {c.rejected:>4} {c.deferred:>8} "
                f"{c.n_ttft:>5} {_f(c.p95):>14} {_f(c.slo_attainment, 3):>6} "
                f"{_f(c.goodput_rps, 1):>9} {naive:>20,.2f}"
            )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.bench fleet", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10k and 100k requests only")
    parser.add_argument("--router", default="cache_aware", choices=ROUTERS)
    parser.add_argument("--repeat", type=int, default=3, help="best of N for runs <= 100k")
    parser.add_argument("--sizes", type=str, default="", help="comma-separated request counts")
    args = parser.parse_args(argv)
    sizes = [10_000, 100_000] if args.quick else [100_000, 1_000_000]
    if args.sizes:
        sizes = [int(x) for x in args.sizes.split(",")]
    _throughput(sizes, args.router, max(1, args.repeat))
    _per_router(min(sizes[-1], 100_000))
    _bake_off()
    _budgets()
    return 0
