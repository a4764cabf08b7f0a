"""`python -m core.bench kda`: kda_chunked vs kda_recurrent vs fla's naive_chunk_kda, one run.

B=1, H=4, K=V=64, float32, gates in [-5, 0] (the K3 lower bound), chunk 64. Each time is the
best wall time (core.bench.timing.best_of) over rounds that interleave kda_chunked and
kda_recurrent, so a slow phase of a shared machine hits both alike; fla's reference is timed
afterwards. Targets: kda_chunked >= 10x faster than kda_recurrent at T=4096, and faster than
fla's naive chunk form. `--quick` stops at T=4096 and times fla once per T.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import torch

from core.bench.timing import best_of
from core.kda import kda_chunked, kda_recurrent
from core.kda.reference import fla_version, load_fla_kda_naive
from core.speculative.drafts import DraftProjections

B, H, K, V, CHUNK, LOWER_BOUND = 1, 4, 64, 64, 64, -5.0
TARGET_T, TARGET_SPEEDUP = 4096, 10.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """Best times in seconds for one T (fla None when fla-core is missing) and the errors."""

    T: int
    chunked: float
    recurrent: float
    fla: float | None
    err_recurrent: float
    err_fla: float | None


def _rel(ref: torch.Tensor, x: torch.Tensor) -> float:
    return float((ref - x).abs().max() / ref.abs().max())


def _inputs(T: int) -> tuple[torch.Tensor, ...]:
    d = DraftProjections.from_random(B, T, H, K, V, torch.float32, T, LOWER_BOUND)
    return d.q, d.k, d.v, d.g, d.beta


def _best(fns: dict[str, Callable[[], object]], plan: dict[str, tuple[int, int]]) -> dict:
    """Interleaved timing; plan[name] = (rounds, repeats per round)."""
    best = {name: float("inf") for name in fns}
    for r in range(max(rounds for rounds, _ in plan.values())):
        for name, fn in fns.items():
            rounds, repeats = plan[name]
            if r < rounds:
                best[name] = min(best[name], best_of(fn, repeat=repeats, warmup=0))
    return best


def measure(lengths: list[int], rounds: int, fla_rounds: int) -> list[Row]:
    """Time the three forms per T; errors of kda_chunked against the other two.

    fla's reference allocates gigabytes in Python loops, which disturbs the allocator for
    whatever runs next, so it is timed after all lab timings.
    """
    lab = {}
    for T in lengths:
        x = _inputs(T)
        fns = {
            "chunked": partial(kda_chunked, *x, chunk_size=CHUNK),
            "recurrent": partial(kda_recurrent, *x),
        }
        outs = {name: fn()[0] for name, fn in fns.items()}
        plan = {"chunked": (rounds, 5), "recurrent": (rounds, 2 if T <= 4096 else 1)}
        lab[T] = (_best(fns, plan), outs)
    fla = load_fla_kda_naive()
    rows = []
    for T in lengths:
        best, outs = lab[T]
        t_fla = err_fla = None
        if fla is not None:
            run = partial(fla.naive_chunk_kda, *_inputs(T), chunk_size=CHUNK)
            err_fla = _rel(run()[0], outs["chunked"])
            t_fla = _best({"fla": run}, {"fla": (fla_rounds, 1)})["fla"]
        err = _rel(outs["recurrent"], outs["chunked"])
        rows.append(Row(T=T, chunked=best["chunked"], recurrent=best["recurrent"], fla=t_fla,
                        err_recurrent=err, err_fla=err_fla))
    return rows


def format_table(rows: list[Row]) -> str:
    """The side-by-side table, times in ms and speed ratios relative to kda_chunked."""
    head = (
        f"{'T':>6} | {'kda_recurrent':>13} | {'fla naive_chunk':>15} | {'kda_chunked':>11} | "
        f"{'rec/chunked':>11} | {'fla/chunked':>11} | {'err vs rec':>10} | {'err vs fla':>10}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        fla = f"{r.fla * 1e3:12.1f} ms" if r.fla is not None else f"{'n/a':>15}"
        fla_x = f"{r.fla / r.chunked:10.1f}x" if r.fla is not None else f"{'n/a':>11}"
        fla_e = f"{r.err_fla:10.1e}" if r.err_fla is not None else f"{'n/a':>10}"
        lines.append(
            f"{r.T:>6} | {r.recurrent * 1e3:10.1f} ms | {fla} | {r.chunked * 1e3:8.2f} ms | "
            f"{r.recurrent / r.chunked:10.1f}x | {fla_x} | {r.err_recurrent:10.1e} | {fla_e}"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.bench kda", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="T up to 4096; fla timed once")
    parser.add_argument("--T", type=int, nargs="+", default=None, help="sequence lengths")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds")
    args = parser.parse_args(argv)
    lengths = args.T or ([1024, 4096] if args.quick else [1024, 4096, 16384])
    print(
        f"KDA forward, B={B} H={H} K=V={K} float32, gates in [{LOWER_BOUND:g}, 0], chunk {CHUNK}; "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
        f"fla-core {fla_version() or 'missing'}; best wall time over {args.rounds} rounds"
    )
    rows = measure(lengths, args.rounds, 1 if args.quick else 2)
    print(format_table(rows))
    for r in rows:
        if r.T == TARGET_T:
            speedup = r.recurrent / r.chunked
            verdict = "met" if speedup >= TARGET_SPEEDUP else "NOT met"
            print(f"target kda_chunked >= {TARGET_SPEEDUP:g}x kda_recurrent at T={r.T}: "
                  f"{speedup:.1f}x ({verdict})")
    if any(r.fla is not None for r in rows):
        faster = all(r.fla is None or r.chunked < r.fla for r in rows)
        verdict = "met" if faster else "NOT met"
        print(f"target kda_chunked faster than fla naive_chunk_kda: {verdict}")
    return 0
