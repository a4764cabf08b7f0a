"""Traces: seeded, sorted, and with chained block ids that make shared prefixes visible (each turn
extends the previous turn's chain; sessions on one system prompt share its leading blocks)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core.errors import ParamError
from core.fleet.mooncake import load_mooncake_jsonl, to_mooncake_lines
from core.fleet.traces import (
    BLOCK_SIZE,
    TraceConfig,
    long_burst_trace,
    merge_traces,
    multi_turn_trace,
    poisson_trace,
)

SMALL = TraceConfig(n_requests=1500, seed=3)


def _same(a, b) -> bool:
    return all(
        np.array_equal(getattr(a, f), getattr(b, f))
        for f in (
            "arrival",
            "klass",
            "key",
            "session",
            "prompt_len",
            "output_len",
            "block_offsets",
            "block_ids",
        )
    )


class TestMultiTurn:
    def test_seeded_and_sorted(self):
        a, b = multi_turn_trace(SMALL), multi_turn_trace(SMALL)
        assert _same(a, b)
        assert not _same(a, multi_turn_trace(TraceConfig(n_requests=1500, seed=4)))
        assert a.n == 1500 and np.all(np.diff(a.arrival) >= 0)

    def test_full_blocks_only(self):
        t = multi_turn_trace(SMALL)
        assert np.array_equal(np.diff(t.block_offsets), t.prompt_len // BLOCK_SIZE)

    def test_each_turn_extends_the_previous_chain(self):
        t = multi_turn_trace(SMALL)
        checked = 0
        for s in np.unique(t.session)[:200]:
            idx = np.flatnonzero(t.session == s)
            for prev, nxt in zip(idx[:-1], idx[1:], strict=True):
                assert t.prompt_len[nxt] > t.prompt_len[prev]
                a, b = t.blocks(prev), t.blocks(nxt)
                assert b[: len(a)] == a
                checked += 1
        assert checked > 100

    def test_sessions_on_one_system_prompt_share_leading_blocks(self):
        t = multi_turn_trace(SMALL)
        firsts = {}
        for i in range(t.n):
            blocks = t.blocks(i)
            if blocks and blocks[0] >= 1 << 62:
                firsts.setdefault(blocks[0], set()).add(int(t.session[i]))
        assert max(len(s) for s in firsts.values()) > 10

    def test_long_fraction(self):
        t = multi_turn_trace(TraceConfig(n_requests=4000, long_frac=0.3, seed=1))
        assert 0.2 < t.klass.mean() < 0.4

    @pytest.mark.parametrize(
        "kwargs, match",
        [
            ({"n_requests": 0}, "n_requests"),
            ({"rate": 0.0}, "rate"),
            ({"long_frac": 1.5}, "long_frac"),
            ({"mean_turns": 0.5}, "mean_turns"),
            ({"user_tokens": (10, 5)}, r"user_tokens\[1\]"),
            ({"seed": -1}, "seed"),
        ],
    )
    def test_bad_config(self, kwargs, match):
        with pytest.raises(ParamError, match=match):
            TraceConfig(**kwargs)


class TestPoissonAndMerge:
    def test_merge_keeps_each_requests_blocks(self):
        a = poisson_trace(20, 5, 0, (600, 2000), seed=1)
        b = poisson_trace(5, 5, 1, (4000, 9000), seed=2, first_session=10_000)
        m = merge_traces(a, b)
        assert m.n == a.n + b.n and np.all(np.diff(m.arrival) >= 0)
        want = {int(a.session[i]): a.blocks(i) for i in range(a.n)}
        want.update({int(b.session[i]): b.blocks(i) for i in range(b.n)})
        assert all(m.blocks(i) == want[int(m.session[i])] for i in range(m.n))

    def test_long_burst_lies_in_its_window(self):
        t = long_burst_trace(seed=5)
        longs = t.arrival[t.klass == 1]
        assert longs.size > 50 and longs.min() >= 10.0 and longs.max() < 20.0

    def test_bad_arguments(self):
        with pytest.raises(ParamError, match="rate"):
            poisson_trace(0, 1)
        with pytest.raises(ParamError, match="traces"):
            merge_traces()


class TestMooncake:
    LINES = [
        '{"timestamp": 1000, "input_length": 6758, "output_length": 10, '
        '"hash_ids": [0,1,2,3,4,5,6,7,8,9,10,11,12,13]}',
        '{"timestamp": 0, "input_length": 915, "output_length": 20, "hash_ids": [0, 14]}',
        "",
    ]

    def test_reads_the_published_format(self, tmp_path):
        path = tmp_path / "trace.jsonl"
        path.write_text("\n".join(self.LINES))
        t = load_mooncake_jsonl(path, long_threshold=4096)
        assert t.n == 2 and t.arrival.tolist() == [0.0, 1.0]
        assert t.blocks(0) == [0, 14] and len(t.blocks(1)) == 14
        assert t.klass.tolist() == [0, 1] and t.key.tolist() == [0, 0]

    def test_round_trip(self):
        t = poisson_trace(10, 3, 0, (600, 3000), seed=2)
        back = load_mooncake_jsonl(to_mooncake_lines(t), long_threshold=10**6)
        assert [back.blocks(i) for i in range(back.n)] == [t.blocks(i) for i in range(t.n)]
        assert np.allclose(back.arrival, t.arrival - t.arrival[0], atol=1e-3)

    def test_bad_line_names_its_number(self):
        with pytest.raises(ParamError, match="line 2"):
            load_mooncake_jsonl([self.LINES[0], '{"timestamp": 1}'])
        with pytest.raises(ParamError, match="at least one"):
            load_mooncake_jsonl([""])


def test_inconsistent_trace_is_refused():
    t = poisson_trace(10, 2, seed=1)
    with pytest.raises(ParamError, match="arrival"):
        replace(t, arrival=t.arrival[::-1].copy())
    with pytest.raises(ParamError, match="block_offsets"):
        replace(t, block_offsets=t.block_offsets[:-1])
    with pytest.raises(ParamError, match="klass"):
        replace(t, klass=t.klass[:-1])
