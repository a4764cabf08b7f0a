"""Claims of the glossary: the K3 dimensions from core.dims, definitions checked by computing."""

from __future__ import annotations

import math

import numpy as np

from core.dims import K3
from core.fleet.metrics import percentile
from core.fleet.ring_arrays import keyspace_shares, ring_view, route_keys, session_array
from core.model.config import ModelDims
from tests.lessons.claims_engine import _sweep
from tests.lessons.registry import Reason, Within, claim, reason


@claim("glossary", "{layers} layers ({kda} KDA, {mla} MLA; {moe} of them MoE), {experts} routed "
       "experts per MoE layer of which each token uses {k}.")
def k3_dims() -> dict[str, object]:
    assert K3.n_kda + K3.n_mla == K3.n_layers
    return {"layers": K3.n_layers, "kda": K3.n_kda, "mla": K3.n_mla, "moe": K3.n_moe,
            "experts": K3.n_experts, "k": K3.top_k}


@claim("glossary", "the {nth}th percentile: {nth}% of the measured values are at or below it.")
def p95() -> dict[str, object]:
    x = np.arange(1, 101, dtype=float)
    p = percentile(x, 95)
    assert (x <= p).mean() >= 0.95
    return {"nth": 95}


@claim("glossary", "divided by the mean; {zero} means perfectly even.")
def cv_zero() -> dict[str, object]:
    even = np.full(8, 3.0)
    return {"zero": int(even.std() / even.mean())}


@claim("glossary", "lower is better, and {bits} means no better than guessing.")
def bits_per_byte_of_guessing() -> dict[str, object]:
    return {"bits": int(math.log2(ModelDims().vocab))}  # uniform over 256 byte values


@claim("glossary", "With greedy verification the output is exactly what plain greedy decoding "
       "writes; only the number of passes changes.")
def speculation_keeps_the_output() -> dict[str, object]:
    """Every engine run the Engine tab shows, at every gamma, against plain greedy decoding of
    the same prompt: the same bytes, in fewer passes."""
    sw = _sweep()
    for r in sw.runs:
        plain = sw.plain[sw.kinds.index(r.kind)]
        assert r.text == plain and len(r.passes) < len(plain)
    return {}


def _share_cv(servers: int, points: int, first_draw: int = 0) -> float:
    """CV of the servers' keyspace shares, mean over 16 ring draws from first_draw."""
    return float(np.mean([(lambda x: x.std() / x.mean())(keyspace_shares(ring_view(servers,
                                                                                   points, d)))
                          for d in range(first_draw, first_draw + 16)]))


@reason("glossary", "each server is placed at several points on a consistent-hash ring so load "
                    "spreads more evenly.")
def vnodes_spread() -> Reason:
    """Effect: the CV of 8 servers' keyspace shares (mean over ring draws) with one point each.
    Cause: several points per server (8, 64): down by at least half. Rival: where the points
    fall (two other sets of 16 ring draws) at one point each: within a tenth."""
    base = _share_cv(8, 1)
    return Reason(effect="CV of the servers' keyspace shares", base=base,
                  cause="points per server (1 -> 8, 64)",
                  changed=[_share_cv(8, v) for v in (8, 64)], expect="down", at_least=base / 2,
                  rival="where the points fall (ring draws 16 .. 47), one point each",
                  rival_effects=[_share_cv(8, 1, d) for d in (16, 32)],
                  within=Within(name="a tenth", rel=0.10))


def _needless_moves(servers: int, points: int, removed: int, ring: bool) -> float:
    """The share of keys that change server when `removed` leaves though their server stayed:
    on the ring (`points` per server), or with the usual alternative, hash mod N."""
    keys = session_array(4000)
    if ring:
        view = ring_view(servers, points, 0)
        before, _ = route_keys(view, keys)
        rest = view.without(removed)
        after, _ = route_keys(rest, keys)
    else:
        before = (keys % np.uint64(servers)).astype(np.int64)
        survivors = np.array([s for s in range(servers) if s != removed])
        after = survivors[(keys % np.uint64(servers - 1)).astype(np.int64)]
    stayed = before != removed
    return float(np.mean(stayed & (after != before)))


@reason("glossary", "mapping keys and servers onto one ring so that adding or removing a server "
                    "moves only the keys next to it.")
def consistent_hashing_moves() -> Reason:
    """Effect: the share of keys that move though their server stayed, when one of 8 servers
    leaves. Cause: the ring (-> hash mod N): up by at least half the keys. Rival: the points
    per server (1, 8, 128) and which server leaves (0, 3), on the ring: none moves."""
    base = _needless_moves(8, 8, 0, True)
    return Reason(effect="keys moved whose server stayed (share)", base=base,
                  cause="the ring (-> hash mod N)", changed=_needless_moves(8, 8, 0, False),
                  expect="up", at_least=0.5,
                  rival="points per server (1, 8, 128), the server removed (0, 3)",
                  rival_effects=[_needless_moves(8, v, r, True) for v in (1, 8, 128)
                                 for r in (0, 3)],
                  within=Within(name="none (exactly 0)", abs=0.0))
