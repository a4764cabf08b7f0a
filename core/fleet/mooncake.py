"""Mooncake FAST'25 trace format: one JSON object per line with `timestamp` (ms),
`input_length`, `output_length` and `hash_ids`, remapped chained block hashes at 512 tokens per
block (shared leading ids mean a shared prefix). Keep real trace data out of the repository.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from core.errors import ParamError, check_int
from core.fleet.traces import BLOCK_SIZE, Trace


def load_mooncake_jsonl(
    source: str | Path | Iterable[str], long_threshold: int = 8192, block_size: int = BLOCK_SIZE
) -> Trace:
    """Read Mooncake FAST'25 lines {timestamp ms, input_length, output_length, hash_ids}.

    Arrival is seconds from the first timestamp, the routing key and session are the first hash
    id, and a request is long when input_length >= long_threshold.
    """
    check_int("long_threshold", long_threshold, 1)
    check_int("block_size", block_size, 1)
    lines = Path(source).read_text().splitlines() if isinstance(source, (str, Path)) else source
    rows = []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            rows.append(
                (
                    float(obj["timestamp"]),
                    int(obj["input_length"]),
                    int(obj["output_length"]),
                    [int(h) for h in obj["hash_ids"]],
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ParamError(f"source line {lineno}: not a Mooncake record ({exc})") from None
    if not rows:
        raise ParamError("source must hold at least one Mooncake record")
    rows.sort(key=lambda r: r[0])
    t0 = rows[0][0]
    ids = [h for r in rows for h in r[3]]
    key = np.array([r[3][0] if r[3] else -1 - j for j, r in enumerate(rows)], dtype=np.int64)
    inp = np.array([r[1] for r in rows], dtype=np.int64)
    return Trace(
        arrival=np.array([(r[0] - t0) / 1000.0 for r in rows]),
        klass=(inp >= long_threshold).astype(np.int8),
        key=key,
        session=key.copy(),
        prompt_len=inp,
        output_len=np.array([r[2] for r in rows], dtype=np.int64),
        block_offsets=np.concatenate([[0], np.cumsum([len(r[3]) for r in rows])]).astype(np.int64),
        block_ids=np.array(ids, dtype=np.int64),
        block_size=block_size,
    )


def to_mooncake_lines(trace: Trace) -> list[str]:
    """The trace as Mooncake JSONL lines (timestamps in integer ms)."""
    return [
        json.dumps(
            {
                "timestamp": int(round(float(trace.arrival[i]) * 1000)),
                "input_length": int(trace.prompt_len[i]),
                "output_length": int(trace.output_len[i]),
                "hash_ids": trace.blocks(i),
            }
        )
        for i in range(trace.n)
    ]
