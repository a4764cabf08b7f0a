"""The verify pass is plain decode's arithmetic: window logits and committed states equal T
HybridLM.step calls bit for bit.

Pinned: for windows of 1 to 9 tokens after a prefill, every logits row of verify_window equals
the step's (torch.equal), the input state is untouched, and commit(n) leaves exactly the state
of n steps (S, conv tail, MLA latents, pos, tokens) for every n, replaying n positions per KDA
layer unless the whole window is kept. Widths that are multiples of 32 (ALIGNED) and that are
not (TINY's 16-wide experts, 2-wide beta) are covered, and so is a window served through the
ExpertCache.
"""

from __future__ import annotations

import pytest
import torch

from core.errors import ParamError
from core.model.config import ModelDims
from core.model.layers import KDAState, MLAState
from core.model.model import DecodeState, HybridLM
from core.model.providers import CacheProvider, open_cache
from core.serve.verify import commit, verify_window
from tests.core.model.conftest import TINY, tiny_model

pytestmark = pytest.mark.usefixtures("one_thread")

ALIGNED = ModelDims(d_model=32, n_layers=4, kda_heads=2, kda_head_dim=16, gate_rank=4,
                    mla_heads=2, mla_head_dim=16, kv_latent=8, n_experts=8, top_k=2,
                    expert_inner=32, shared_inner=32, context=64)


def _aligned_model() -> HybridLM:
    torch.manual_seed(5)
    return HybridLM(ALIGNED).eval()


def _copy(s: DecodeState) -> DecodeState:
    layers = [KDAState(x.conv.clone(), x.S.clone()) if isinstance(x, KDAState)
              else MLAState(x.latent.clone()) for x in s.layers]
    return DecodeState(layers, s.pos, [list(t) for t in s.tokens])


def _same(a: DecodeState, b: DecodeState) -> bool:
    if (a.pos, a.tokens) != (b.pos, b.tokens):
        return False
    for x, y in zip(a.layers, b.layers, strict=True):
        pairs = ([(x.S, y.S), (x.conv, y.conv)] if isinstance(x, KDAState)
                 else [(x.latent, y.latent)])
        if not all(torch.equal(p, q) for p, q in pairs):
            return False
    return True


def _case(model: HybridLM, T: int, seed: int, provider=None):
    gen = torch.Generator().manual_seed(seed)
    prompt = torch.randint(0, 256, (1, 37), generator=gen)
    toks = torch.randint(0, 256, (T,), generator=gen).tolist()
    state = model.new_state(1)
    with torch.no_grad():
        model(prompt, state)
        stepped, states, logits = _copy(state), [], []
        for t in toks:
            logits.append(model.step(torch.tensor([t]), stepped, provider).logits[0])
            states.append(_copy(stepped))
    return state, toks, torch.stack(logits), states


def _check(model: HybridLM, T: int, seed: int, provider=None) -> None:
    state, toks, want, states = _case(model, T, seed)
    before = _copy(state)
    win = verify_window(model, toks, state, provider)
    assert torch.equal(win.logits, want), f"T={T}: window logits differ from the step's"
    assert _same(state, before), "verify_window changed the state"
    for n in range(1, T + 1):
        s = _copy(state)
        replayed = commit(s, win, n)
        assert replayed == (0 if n == T else n)
        assert _same(s, states[n - 1]), f"commit({n}) of {T} differs from {n} steps"


@pytest.mark.parametrize("T", [1, 2, 5, 9])
def test_aligned_window_equals_steps(T):
    _check(_aligned_model(), T, seed=T)


@pytest.mark.parametrize("T", [3, 9])
def test_narrow_window_equals_steps(T):
    _check(tiny_model(2), T, seed=10 + T)


def test_shipped_window_equals_steps(shipped):
    _check(shipped, 9, seed=1)


def test_window_through_the_expert_cache(tiny_dir):
    """Experts streamed through a cache of top_k + 1 slots give the same bits."""
    model = tiny_model(0)  # the model saved in tiny_dir
    state, toks, want, _ = _case(model, 6, seed=3)
    with open_cache(tiny_dir, TINY, TINY.top_k + 1) as cache:
        win = verify_window(model, toks, state, CacheProvider(cache))
        assert cache.stats().demand_misses > 0
    assert torch.equal(win.logits, want)


@pytest.mark.parametrize(("call", "name"), [
    (lambda m, s: verify_window(m, [], s), "tokens"),
    (lambda m, s: verify_window(m, [1] * 65, s), "tokens"),
    (lambda m, s: verify_window(m, [256], s), "tokens"),
    (lambda m, s: commit(s, verify_window(m, [1, 2], s), 3), "n"),
    (lambda m, s: commit(s, verify_window(m, [1, 2], s), 0), "n"),
])
def test_bad_input_names_the_parameter(call, name):
    model = _aligned_model()
    with pytest.raises(ParamError, match=name):
        call(model, model.new_state(1))
