"""Random op sequences against the cache: invariants hold, bytes match, no slot leaks.

After every operation: the window invariants, no INFLIGHT slot, key map and slot states
agree, every resident expert is byte-exact against safe_open, and (fixed mode) every view
handed out since the last begin_layer is still valid, however many gets followed it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import ParamError
from core.experts import (
    ExpertCache,
    NotResident,
    ShardIndex,
    SlotsExhausted,
    invariant_errors,
    write_fixture,
)

from .conftest import Truth

L, E, K = 2, 12, 3


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[tuple[int, int], bytes]]:
    d = tmp_path_factory.mktemp("prop")
    write_fixture(d, n_layers=L, n_experts=E, n_shards=2, order="canonical")
    truth = Truth(d)
    return d, {(layer, e): truth.payload(layer, e) for layer in range(L) for e in range(E)}


layer_ = st.integers(0, L - 1)
expert_ = st.integers(0, E - 1)
op_ = st.one_of(
    st.tuples(st.just("get"), layer_, expert_),
    st.tuples(st.just("many"), layer_, st.lists(expert_, min_size=1, max_size=6)),
    st.tuples(st.just("warm"), layer_, expert_),
    st.tuples(st.just("pin"), layer_, expert_, st.booleans()),
    st.tuples(st.just("resident"), layer_, expert_),
    st.tuples(st.just("reset")),
    st.tuples(st.just("begin")),
)


def _check(c: ExpertCache, payloads: dict, live: list, fixed: bool) -> None:
    s = c.stats()
    assert invariant_errors(s) == []
    t = c._t
    assert s.inflight == 0
    ready = [x for x in range(c.n_slots) if t.key_of[x] >= 0]
    assert sum(1 for x in t.slot_of if x >= 0) == len(ready)
    for x in ready:
        assert t.slot_of[t.key_of[x]] == x
        v = t.views[x]
        assert v.valid() and v.payload() == payloads[(v.layer, v.expert)]
    if fixed:
        assert all(v.valid() for v in live)
        assert s.leased == len({v.slot for v in live})


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(op_, min_size=1, max_size=40),
    compat=st.sampled_from(["k3-v1", None]),
    chunk=st.sampled_from([None, 4096]),
)
def test_random_ops_keep_invariants(small, ops, compat, chunk) -> None:
    d, payloads = small
    fixed = compat is None
    with ExpertCache(ShardIndex.open(d), L, E, K, 6 * 12_288, compat=compat,
                     chunk_bytes=chunk, max_workers=2) as c:
        live: list = []  # views handed out since the last begin_layer
        gets = 0
        for op in ops:
            kind = op[0]
            try:
                if kind == "get":
                    v = c.get(op[1], op[2])
                    assert v.payload() == payloads[(op[1], op[2])]
                    live.append(v)
                elif kind == "many":
                    n = c.get_many(op[1], op[2])
                    assert 0 <= n <= len(set(op[2]))
                elif kind == "warm":
                    c.warm(op[1], op[2])
                elif kind == "pin":
                    c.pin(op[1], op[2], op[3])
                elif kind == "resident":
                    v = c.resident(op[1], op[2])
                    assert v is None or v.payload() == payloads[(op[1], op[2])]
                elif kind == "reset":
                    c.reset_stats()
                    gets = 0
                else:
                    c.begin_layer()
                    live.clear()
            except SlotsExhausted:  # only when no slot is evictable
                t = c._t
                assert kind in ("get", "warm")
                assert all(t.pinned[x] or t.leases[x] for x in range(c.n_slots))
            except NotResident:
                assert kind == "pin" and c.resident(op[1], op[2]) is None
            except ParamError as e:
                assert kind == "pin" and fixed and "at most" in str(e)
            if kind == "get":
                gets += 1
            _check(c, payloads, live, fixed)
            assert c.stats().demand_requests == gets
