"""Request traces and their seeded synthetic generators (Mooncake JSONL lives in mooncake.py).

A Trace is a structure of arrays sorted by arrival. Each request carries a routing key (the
session, or the first block id for Mooncake traces), a class (0 short, 1 long), prompt and output
lengths, and its chained block ids at 512 tokens per block: block_ids[block_offsets[i]:
block_offsets[i + 1]]. Equal ids mean equal prefixes, so a shared system prompt gives shared
leading ids and each turn of a session extends the previous turn's chain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import ParamError, check_float, check_int

BLOCK_SIZE = 512
_SYS_TAG = 1 << 62  # system-prompt chains live above every session chain
_IDX_BITS = 20  # up to 2**20 blocks (512M tokens) per chain


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class Trace:
    arrival: np.ndarray  # (n,) float64 seconds, sorted
    klass: np.ndarray  # (n,) int8: 0 short, 1 long
    key: np.ndarray  # (n,) int64 routing key
    session: np.ndarray  # (n,) int64
    prompt_len: np.ndarray  # (n,) int64 tokens
    output_len: np.ndarray  # (n,) int64 tokens
    block_offsets: np.ndarray  # (n + 1,) int64
    block_ids: np.ndarray  # (block_offsets[-1],) int64 chained block ids
    block_size: int = BLOCK_SIZE

    def __post_init__(self) -> None:
        n = self.arrival.shape[0]
        for name in ("klass", "key", "session", "prompt_len", "output_len"):
            if getattr(self, name).shape != (n,):
                raise ParamError(f"{name} must have shape ({n},) like arrival")
        if self.block_offsets.shape != (n + 1,) or self.block_offsets[-1] != self.block_ids.size:
            raise ParamError(f"block_offsets must have shape ({n + 1},) and end at len(block_ids)")
        if n and (np.any(np.diff(self.arrival) < 0) or not np.isfinite(self.arrival).all()):
            raise ParamError("arrival must be finite and sorted ascending")
        if n and (self.klass.min() < 0 or self.klass.max() > 1):
            raise ParamError("klass must be 0 (short) or 1 (long)")
        check_int("block_size", self.block_size, 1)

    @property
    def n(self) -> int:
        return int(self.arrival.shape[0])

    @property
    def duration(self) -> float:
        return float(self.arrival[-1] - self.arrival[0]) if self.n > 1 else 0.0

    def blocks(self, i: int) -> list[int]:
        return self.block_ids[self.block_offsets[i] : self.block_offsets[i + 1]].tolist()


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceConfig:
    """Open-loop multi-turn sessions: Poisson session starts, Zipf system prompts, and a context
    that grows turn by turn."""

    n_requests: int = 4000
    rate: float = 60.0  # requests per second, all classes
    long_frac: float = 0.15  # fraction of sessions that are long-document sessions
    mean_turns: float = 4.0  # turns per session, 1 + Poisson(mean_turns - 1)
    think_s: float = 6.0  # mean exponential gap between a session's turns
    n_system_prompts: int = 16
    zipf_s: float = 1.1  # popularity exponent over system prompts
    sys_tokens: tuple[int, int] = (1024, 4096)  # uniform length range of each system prompt
    user_tokens: tuple[int, int] = (64, 512)  # per short turn
    doc_tokens: tuple[int, int] = (8192, 24576)  # first turn of a long session
    output_tokens: tuple[int, int] = (64, 512)
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("n_requests", self.n_requests, 1, 50_000_000)
        check_float("rate", self.rate, 1e-6, 1e9)
        check_float("long_frac", self.long_frac, 0.0, 1.0)
        check_float("mean_turns", self.mean_turns, 1.0, 1000.0)
        check_float("think_s", self.think_s, 0.0, 1e6)
        check_int("n_system_prompts", self.n_system_prompts, 1, 1_000_000)
        check_float("zipf_s", self.zipf_s, 0.0, 10.0)
        for name in ("sys_tokens", "user_tokens", "doc_tokens", "output_tokens"):
            lo, hi = getattr(self, name)
            check_int(f"{name}[0]", lo, 1, 1 << 24)
            check_int(f"{name}[1]", hi, lo, 1 << 24)
        check_int("seed", self.seed, 0)


def multi_turn_trace(config: TraceConfig | None = None) -> Trace:
    """Sessions whose turn k prompt is system prompt + all earlier turns + the new message."""
    cfg = config or TraceConfig()
    rng = np.random.default_rng(cfg.seed)
    n_sessions = int(cfg.n_requests / cfg.mean_turns * 1.3) + 16
    turns = 1 + rng.poisson(cfg.mean_turns - 1.0, n_sessions)  # (S,)
    start = np.cumsum(rng.exponential(cfg.mean_turns / cfg.rate, n_sessions))  # (S,)
    is_long = rng.random(n_sessions) < cfg.long_frac  # (S,)
    ranks = np.arange(1, cfg.n_system_prompts + 1, dtype=np.float64)
    popularity = ranks**-cfg.zipf_s
    sys_id = rng.choice(cfg.n_system_prompts, n_sessions, p=popularity / popularity.sum())
    sys_len_of = rng.integers(cfg.sys_tokens[0], cfg.sys_tokens[1] + 1, cfg.n_system_prompts)

    sess = np.repeat(np.arange(n_sessions), turns)  # (R,) session of each turn
    first = np.cumsum(turns) - turns  # (S,) index of each session's first turn
    turn_no = np.arange(sess.size) - first[sess]  # (R,)
    user = rng.integers(cfg.user_tokens[0], cfg.user_tokens[1] + 1, sess.size)
    doc = rng.integers(cfg.doc_tokens[0], cfg.doc_tokens[1] + 1, sess.size)
    user = np.where(is_long[sess] & (turn_no == 0), doc, user)
    out = rng.integers(cfg.output_tokens[0], cfg.output_tokens[1] + 1, sess.size)
    gaps = np.where(turn_no == 0, 0.0, rng.exponential(max(cfg.think_s, 1e-9), sess.size))
    grown = np.cumsum(user + out) - out  # history through this turn's message, then re-based
    base = (np.cumsum(user + out) - (user + out))[first][sess]
    prompt = sys_len_of[sys_id][sess] + grown - base
    arrival = start[sess] + _segment_cumsum(gaps, first, sess)

    order = np.argsort(arrival, kind="stable")[: cfg.n_requests]
    return _build(
        arrival=arrival[order],
        klass=is_long[sess][order].astype(np.int8),
        key=sess[order],
        session=sess[order],
        prompt_len=prompt[order],
        output_len=out[order],
        sys_id=sys_id[sess][order],
        sys_len=sys_len_of[sys_id][sess][order],
    )


def poisson_trace(
    rate: float,
    duration: float,
    klass: int = 0,
    prompt_tokens: tuple[int, int] = (256, 1024),
    output_tokens: tuple[int, int] = (64, 256),
    t0: float = 0.0,
    seed: int = 0,
    first_session: int = 0,
) -> Trace:
    """Single-turn requests of one class with Poisson arrivals on [t0, t0 + duration)."""
    check_float("rate", rate, 1e-6, 1e9)
    check_float("duration", duration, 0.0, 1e9)
    check_int("klass", klass, 0, 1)
    for name, (lo, hi) in (("prompt_tokens", prompt_tokens), ("output_tokens", output_tokens)):
        check_int(f"{name}[0]", lo, 1, 1 << 24)
        check_int(f"{name}[1]", hi, lo, 1 << 24)
    check_int("seed", seed, 0)
    check_int("first_session", first_session, 0)
    rng = np.random.default_rng(seed)
    n = int(rng.poisson(rate * duration))
    arrival = np.sort(t0 + rng.random(n) * duration)
    sess = first_session + np.arange(n, dtype=np.int64)
    return _build(
        arrival=arrival,
        klass=np.full(n, klass, dtype=np.int8),
        key=sess,
        session=sess,
        prompt_len=rng.integers(prompt_tokens[0], prompt_tokens[1] + 1, n),
        output_len=rng.integers(output_tokens[0], output_tokens[1] + 1, n),
        sys_id=np.zeros(n, dtype=np.int64),
        sys_len=np.zeros(n, dtype=np.int64),
    )


def long_burst_trace(
    short_rate: float = 40.0,
    duration: float = 30.0,
    burst_rate: float = 12.0,
    burst: tuple[float, float] = (10.0, 20.0),
    seed: int = 0,
) -> Trace:
    """Steady short requests plus a burst of long-document requests: the budget isolation demo."""
    check_float("burst[0]", burst[0], 0.0, duration)
    check_float("burst[1]", burst[1], burst[0], duration)
    short = poisson_trace(short_rate, duration, 0, (256, 2048), (64, 256), seed=seed)
    long_ = poisson_trace(
        burst_rate,
        burst[1] - burst[0],
        1,
        (8192, 32768),
        (128, 512),
        t0=burst[0],
        seed=seed + 1,
        first_session=short.n,
    )
    return merge_traces(short, long_)


def merge_traces(*traces: Trace) -> Trace:
    """One trace from several (sessions and keys must already be distinct), sorted by arrival."""
    if not traces:
        raise ParamError("traces must hold at least one Trace")
    sizes = {t.block_size for t in traces}
    if len(sizes) != 1:
        raise ParamError(f"traces must share one block_size, got {sorted(sizes)}")
    arrival = np.concatenate([t.arrival for t in traces])
    order = np.argsort(arrival, kind="stable")
    counts = np.concatenate([np.diff(t.block_offsets) for t in traces])[order]
    starts = np.concatenate(
        [
            t.block_offsets[:-1] + sum(int(u.block_ids.size) for u in traces[:j])
            for j, t in enumerate(traces)
        ]
    )[order]
    ids = np.concatenate([t.block_ids for t in traces])
    return Trace(
        arrival=arrival[order],
        klass=np.concatenate([t.klass for t in traces])[order],
        key=np.concatenate([t.key for t in traces])[order],
        session=np.concatenate([t.session for t in traces])[order],
        prompt_len=np.concatenate([t.prompt_len for t in traces])[order],
        output_len=np.concatenate([t.output_len for t in traces])[order],
        block_offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        block_ids=ids[_ranges(starts, counts)],
        block_size=traces[0].block_size,
    )


def _build(*, arrival, klass, key, session, prompt_len, output_len, sys_id, sys_len) -> Trace:
    nb = prompt_len // BLOCK_SIZE  # full blocks only
    sb = np.minimum(nb, sys_len // BLOCK_SIZE)  # leading blocks that are pure system prompt
    offsets = np.concatenate([[0], np.cumsum(nb)]).astype(np.int64)
    owner = np.repeat(np.arange(nb.size), nb)  # (B,) request of each block
    j = np.arange(offsets[-1]) - offsets[:-1][owner]  # (B,) block index within its prompt
    sys_code = _SYS_TAG + (sys_id[owner].astype(np.int64) << _IDX_BITS) + j
    sess_code = (session[owner].astype(np.int64) << _IDX_BITS) + j
    return Trace(
        arrival=np.asarray(arrival, dtype=np.float64),
        klass=np.asarray(klass, dtype=np.int8),
        key=np.asarray(key, dtype=np.int64),
        session=np.asarray(session, dtype=np.int64),
        prompt_len=np.asarray(prompt_len, dtype=np.int64),
        output_len=np.asarray(output_len, dtype=np.int64),
        block_offsets=offsets,
        block_ids=np.where(j < sb[owner], sys_code, sess_code).astype(np.int64),
    )


def _segment_cumsum(x: np.ndarray, first: np.ndarray, seg: np.ndarray) -> np.ndarray:
    total = np.cumsum(x)
    return total - (total - x)[first][seg]


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of arange(s, s + c) for each (s, c)."""
    offsets = np.concatenate([[0], np.cumsum(counts)])
    owner = np.repeat(np.arange(counts.size), counts)
    return (starts[owner] + np.arange(offsets[-1]) - offsets[:-1][owner]).astype(np.int64)
