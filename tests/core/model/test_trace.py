"""Routing traces: the .npz round trip, the request trace the replay consumes, and the
shipped trace's structure (experts specialise by domain)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from core.experts import replay
from core.model.trace import TRACE_FILE, from_routing, load, request_trace, save
from core.model.weights import ASSET_DIR
from tests.core.model.conftest import TINY, tiny_model


def _trace(n: int = 20):
    model = tiny_model()
    idx = torch.randint(0, 256, (1, n), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        out = model(idx)
    return from_routing(out.routing, idx[0].numpy()), out


def test_round_trip(tmp_path: Path) -> None:
    """save/load keeps every array; chosen = top_ids[..., :k]; weights sum to 1."""
    t, out = _trace()
    save(t, tmp_path / "t.npz")
    u = load(tmp_path / "t.npz")
    for f in ("tokens", "domains", "top_ids", "top_scores", "chosen", "weights"):
        assert np.array_equal(getattr(t, f), getattr(u, f)), f
    assert u.shape == (20, TINY.n_layers, TINY.top_k) and u.n_experts == TINY.n_experts
    assert np.array_equal(u.chosen, u.top_ids[..., : TINY.top_k])
    assert np.allclose(u.weights.astype(np.float32).sum(-1), 1, atol=2e-3)
    assert np.array_equal(u.chosen[:, 2], out.routing[2].ids.numpy())


def test_request_trace_order() -> None:
    """Token-major, then layer, then top-k rank; int32 (layer, expert) pairs."""
    t, _ = _trace(3)
    req = request_trace(t)
    k, L = TINY.top_k, TINY.n_layers
    assert req.dtype == np.int32 and req.shape == (3 * L * k, 2)
    assert tuple(req[L * k + k]) == (1, int(t.chosen[1, 1, 0]))


def test_shipped_trace_replays() -> None:
    """The shipped trace feeds core.experts.replay; Belady beats LRU at a quarter capacity."""
    t = load(ASSET_DIR / TRACE_FILE)
    req = request_trace(t)
    cap = t.shape[1] * t.n_experts // 4
    lru, opt = replay(req, cap, "lru"), replay(req, cap, "belady")
    assert lru.requests == len(req) and opt.hits >= lru.hits


def test_shipped_routing_specialises_by_domain() -> None:
    """Some layer routes domains differently: total variation between two domains > 0.3."""
    t = load(ASSET_DIR / TRACE_FILE)
    best = 0.0
    for L in range(t.shape[1]):
        hists = []
        for d in np.unique(t.domains):
            h = np.bincount(t.chosen[t.domains == d, L].ravel(), minlength=t.n_experts)
            hists.append(h / h.sum())
        best = max(best, max(0.5 * np.abs(a - b).sum() for a in hists for b in hists))
    assert best > 0.3
