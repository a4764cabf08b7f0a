"""Prefill (chunked KDA, full attention) and token-by-token decode (kda_step, conv tail,
latent KV append) must give the same logits: a state carried wrongly between tokens (conv
tail off by one, decay applied twice, latent not appended) breaks this at once."""

from __future__ import annotations

import pytest
import torch

from tests.core.model.conftest import TINY, tiny_model

TOL = 1e-4


def _decode_all(model, idx: torch.Tensor) -> torch.Tensor:
    state = model.new_state(idx.shape[0])
    return torch.stack([model.step(idx[:, t], state).logits for t in range(idx.shape[1])], 1)


@pytest.mark.parametrize("T", [1, 5, 40])
def test_prefill_equals_decode(T: int) -> None:
    """Logits of forward over T tokens equal T single steps (float32, max abs <= 1e-4)."""
    model = tiny_model()
    idx = torch.randint(0, 256, (2, T), generator=torch.Generator().manual_seed(T))
    with torch.no_grad():
        full = model(idx).logits  # [B, T, V]
        steps = _decode_all(model, idx)
    assert (full - steps).abs().max().item() <= TOL


@pytest.mark.parametrize("split", [1, 17, 39])
def test_prefill_then_decode(split: int) -> None:
    """A prefill of a prefix that leaves a state, then steps, equals one full forward."""
    model = tiny_model(1)
    idx = torch.randint(0, 256, (1, 40), generator=torch.Generator().manual_seed(split))
    with torch.no_grad():
        full = model(idx).logits
        state = model.new_state(1)
        head = model(idx[:, :split], state).logits
        tail = torch.stack([model.step(idx[:, t], state).logits for t in range(split, 40)], 1)
    assert state.pos == 40 and state.tokens[0] == idx[0].tolist()
    assert (head - full[:, :split]).abs().max().item() <= TOL
    assert (tail - full[:, split:]).abs().max().item() <= TOL


def test_shipped_prefill_equals_decode(shipped) -> None:
    """The trained weights (sharper gates and routers) keep prefill and decode within 1e-4."""
    idx = torch.tensor([list(b"12 + 30 = 42\ndef load_x(n, i):\n    return n")])
    with torch.no_grad():
        full = shipped(idx).logits
        steps = _decode_all(shipped, idx)
    assert (full - steps).abs().max().item() <= TOL


def test_state_size_matches_ledger() -> None:
    """DecodeState bytes = KDA ledger per KDA layer + latent bytes per token per MLA layer."""
    model = tiny_model()
    state = model.new_state(1)
    with torch.no_grad():
        model(torch.zeros(1, 10, dtype=torch.long), state)
    want = TINY.n_kda * TINY.kda_state_bytes + TINY.n_mla * 10 * TINY.mla_bytes_per_token
    assert state.nbytes() == want
