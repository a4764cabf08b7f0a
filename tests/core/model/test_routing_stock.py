"""The model with stock selection: policies that reduce to stock change no bit, and the MoE
agrees with the one written before selection policies existed.

`_pre_policy_forward` is MoE.forward as it was before core.routing (route = softmax, topk,
renormalise; no policy, no hooks; torch's own kernels, experts added in visit order), kept
here verbatim as an independent oracle: the shipped model's prefill and decode logits through
it agree with today's to float32 rounding (FP32_DECODE; the invariant kernels round
differently, core/model/kernels.py). Through today's MoE, bit for bit: no policy, the `topk`
RoutePolicy, max_rank / cum_prob over AllResident (everything resident reduces to stock), and
the ExpertCache. The routing trace shipped in assets/model pins the chosen experts too.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core.model.moe import MoE, expert_ffn, visit_order
from core.model.providers import AllResident, CacheProvider, open_cache
from core.model.router import Routing
from core.model.trace import TRACE_FILE, load
from core.model.weights import ASSET_DIR
from core.routing import RouteConfig, RoutePolicy
from tests.tolerance import FP32_DECODE, assert_close

PROMPT = b'{"id": 7, "name": "carol"}\n12 + 30 = 42\ndef load(path):\n'
N_STEPS = 12


def _pre_policy_forward(self, x, provider, kx=None):
    B, T, D = x.shape
    flat = x.reshape(B * T, D)
    scores = self.router(flat).softmax(-1)
    top, ids = scores.topk(self.d.top_k, dim=-1)
    r = Routing(scores, ids, top / top.sum(-1, keepdim=True), visit_order(ids))
    out = F.linear(F.silu(self.shared_w1(flat)) * self.shared_w3(flat), self.shared_w2.weight)
    for e, (w1, w2, w3) in provider.experts(self.layer, r.order):
        rows, slot = (r.ids == e).nonzero(as_tuple=True)
        y = expert_ffn(flat[rows], w1, w2, w3) * r.weights[rows, slot, None]
        out = out.index_add(0, rows, y)
    return out.view(B, T, D), r


@torch.no_grad()
def _run(model, provider=None) -> list[torch.Tensor]:
    """Prefill logits, then N_STEPS greedy decode logits, as one list."""
    state = model.new_state(1)
    out = model(torch.tensor([list(PROMPT)]), state, provider)
    logits = [out.logits[0]]
    tok = out.logits[0, -1].argmax(-1, keepdim=True)
    for _ in range(N_STEPS):
        step = model.step(tok, state, provider).logits  # [1, V]
        logits.append(step)
        tok = step.argmax(-1)
    return logits


@pytest.fixture(scope="module")
def before(shipped):
    """Today's stock path: no provider, the model's own experts."""
    return _run(shipped)


def _equal(a: list[torch.Tensor], b: list[torch.Tensor]) -> None:
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        assert torch.equal(x, y), f"call {i} differs"


def test_agrees_with_the_pre_policy_moe(shipped, before) -> None:
    mp = pytest.MonkeyPatch()
    mp.setattr(MoE, "forward", _pre_policy_forward)
    try:
        oracle = _run(shipped)
    finally:
        mp.undo()
    assert len(oracle) == len(before)
    for i, (x, y) in enumerate(zip(oracle, before, strict=True)):
        assert_close(x, y, FP32_DECODE, f"call {i}")


@pytest.mark.parametrize("cfg", [
    RouteConfig("topk", k=2),
    RouteConfig("max_rank", k=2, J=1, M=12, alpha=0.5),
    RouteConfig("cum_prob", k=2, J=0, P=0.9),
], ids=["topk", "max_rank-all-resident", "cum_prob-all-resident"])
def test_policy_over_all_resident(shipped, before, cfg) -> None:
    """A policy whose choice reduces to stock gives the same bits, order of experts included."""
    policy = RoutePolicy(cfg, shipped.dims.n_layers)
    _equal(before, _run(shipped, AllResident(shipped.resident().stacks, policy)))
    assert policy.total("decode").swaps == 0 and policy.total("prefill").swaps == 0


def test_topk_policy_through_the_cache(shipped, before) -> None:
    d = shipped.dims
    with open_cache(ASSET_DIR, d, d.n_layers * d.n_experts // 4) as cache:
        got = _run(shipped, CacheProvider(cache, RoutePolicy(RouteConfig("topk", k=2), 8)))
    _equal(before, got)


@torch.no_grad()
def test_shipped_trace_ids(shipped) -> None:
    """The chosen experts of the first 256 traced tokens (assets/model/trace.npz, one prefill
    call, as it was recorded) are today's chosen experts."""
    trace = load(ASSET_DIR / TRACE_FILE)
    toks = torch.from_numpy(trace.tokens[:256].astype(np.int64))[None]  # [1, 256]
    routing = shipped(toks).routing
    got = torch.stack([r.ids for r in routing], 1).numpy()  # [256, L, k]
    assert np.array_equal(got, trace.chosen[:256].astype(np.int64))
