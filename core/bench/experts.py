"""Expert-cache benchmark: `python -m core.bench experts [--quick]`.

Side by side, in one run: get() hits per second; get_many read throughput against a plain
sequential read of the same page-cached shard with ~1 MiB experts (target ratio >= 0.5);
LRU trace replay of 1M requests (target <= 3 s). Temporary shards live under tempfile and
are removed afterwards.
"""

from __future__ import annotations

import mmap
import os
import tempfile
import time
from pathlib import Path

from core.bench.timing import best_of
from core.experts import (
    ExpertCache,
    ShardIndex,
    replay,
    slot_stride,
    synthetic_trace,
    write_fixture,
)

MIB = 1 << 20


def _hits_per_second(d: Path, expert_bytes: int, n: int) -> float:
    with ExpertCache(ShardIndex.open(d), 1, 24, 4, 8 * slot_stride(expert_bytes)) as c:
        for e in range(8):
            c.get(0, e)
        ids = [e % 8 for e in range(n)]

        def run() -> None:
            for e in ids:
                c.get(0, e)

        return n / best_of(run, repeat=3)


def _sequential_read(path: Path, start: int, nbytes: int) -> float:
    """Seconds to read [start, start + nbytes) front to back in 1 MiB preads into one buffer
    as large as the data (an anonymous mmap, like the cache's arena)."""
    buf = mmap.mmap(-1, nbytes)
    mem = memoryview(buf)
    fd = os.open(path, os.O_RDONLY)
    try:
        def run() -> None:
            off = 0
            while off < nbytes:
                n = os.preadv(fd, [mem[off : min(off + MIB, nbytes)]], start + off)
                if n <= 0:
                    raise OSError(f"short read at {start + off}")
                off += n

        return best_of(run, repeat=5)
    finally:
        os.close(fd)
        mem.release()
        buf.close()


def _get_many_rate(d: Path, n_experts: int, expert_bytes: int, direct: bool) -> float:
    """Payload bytes per second of get_many sweeping all experts in batches of half of them."""
    half = n_experts // 2
    budget = (half + 1) * slot_stride(expert_bytes)
    with ExpertCache(ShardIndex.open(d), 1, n_experts, 4, budget, direct_io=direct) as c:
        batches = [list(range(0, half)), list(range(half, n_experts))]

        def run() -> None:
            for ids in batches:  # each batch evicts the other half's experts
                c.get_many(0, ids)

        run()
        c.reset_stats()
        run()
        per_sweep = c.stats().bytes_read  # steady state: one expert per batch stays resident
        if per_sweep < (n_experts - 2) * expert_bytes:
            raise RuntimeError(f"get_many read only {per_sweep} B per sweep")
        return per_sweep / best_of(run, repeat=5)


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    n_hits = 20_000 if quick else 200_000
    n_big = 8 if quick else 64
    n_trace_tokens = 2_000 if quick else 20_000  # x 25 layers x top-2 = 1M requests in full
    rows = 2048  # packed 2048 x 160 + scales 2048 x 10, three matrices: 1,044,480 B
    with tempfile.TemporaryDirectory(prefix="bench-experts-") as tmp:
        small, big = Path(tmp) / "k3", Path(tmp) / "big"
        small_info = write_fixture(small)
        info = write_fixture(big, n_experts=n_big, rows=rows, packed_cols=160)
        eb = info.expert_bytes
        payload = n_big * eb
        path, start = info.paths[0], info.data_starts[0]
        _sequential_read(path, start, payload)  # warm the page cache

        hits = _hits_per_second(small, small_info.expert_bytes, n_hits)
        seq = _sequential_read(path, start, payload)
        many = _get_many_rate(big, n_big, eb, direct=False)
        trace = synthetic_trace(n_trace_tokens, 25, 64, 2, 1.0, 0.5, 0)
        t0 = time.perf_counter()
        r = replay(trace, 256, "lru")
        replay_s = time.perf_counter() - t0
        direct_line = ""
        with ExpertCache(ShardIndex.open(big), 1, n_big, 4, 5 * slot_stride(eb)) as probe:
            if probe.direct_io:
                rate = _get_many_rate(big, n_big, eb, direct=True)
                direct_line = f"; O_DIRECT from the device: {rate / 1e9:.2f} GB/s"

    seq_rate = payload / seq
    ratio = many / seq_rate
    print(f"expert cache benchmark ({'quick' if quick else 'full'}; {os.cpu_count()} CPUs)")
    print(f"  get() hits            {hits:>12,.0f} /s   ({n_hits:,} hits on 8 resident experts)")
    print(f"  sequential read       {seq_rate / 1e9:>12.2f} GB/s "
          f"({n_big} x {eb:,} B, page-cached)")
    print(f"  get_many read         {many / 1e9:>12.2f} GB/s "
          f"(batches of {n_big // 2}, buffered){direct_line}")
    print(f"  get_many / sequential {ratio:>12.2f}      target >= 0.5: "
          f"{'ok' if ratio >= 0.5 else 'BELOW TARGET'}")
    print(f"  LRU replay            {replay_s:>12.3f} s    {r.requests:,} requests, "
          f"capacity 256, hit rate {r.hit_rate:.3f}; target <= 3 s: "
          f"{'ok' if replay_s <= 3.0 else 'ABOVE TARGET'}")
    return 0
