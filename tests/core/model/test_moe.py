"""The MoE's expert-grouped fast path equals the whiteboard form (every expert on every token,
masked by the top-k weights); the router's scores are a softmax; bad input is refused; a
selection policy sees the provider's residency once per layer call, and the provider's hooks
run in order around the fetch."""

from __future__ import annotations

import pytest
import torch

from core.errors import ParamError
from core.model.moe import naive_moe
from core.model.providers import AllResident
from tests.core.model.conftest import TINY, tiny_model


def test_grouped_equals_naive() -> None:
    """Relative error of the grouped path vs the dense masked form stays at float32 rounding."""
    model = tiny_model(2)
    moe = model.blocks[1].moe
    x = torch.randn(2, 9, TINY.d_model, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        fast, r = moe(x, model.resident())
        slow = naive_moe(moe, x)
    assert ((fast - slow).norm() / slow.norm()).item() < 1e-5
    assert torch.allclose(r.scores.sum(-1), torch.ones(18))
    assert torch.equal(r.ids, r.scores.topk(TINY.top_k, -1).indices)
    assert torch.allclose(r.weights.sum(-1), torch.ones(18))


def test_bad_input() -> None:
    """Out-of-vocabulary ids, wrong dtypes and empty prompts raise ParamError."""
    model = tiny_model()
    with pytest.raises(ParamError, match=r"\[0, 255\]"):
        model(torch.tensor([[1, 256]]))
    with pytest.raises(ParamError, match="int64"):
        model(torch.zeros(1, 3))
    with pytest.raises(ParamError, match="non-empty bytes"):
        model.generate(b"", 3)
    with pytest.raises(ParamError, match="one entry per sequence"):
        model.step(torch.tensor([1, 2]), model.new_state(1))


class _Recorder(AllResident):
    """AllResident that reports a fixed residency and logs every hook and fetch in order."""

    def __init__(self, stacks, policy, resident: torch.Tensor) -> None:
        super().__init__(stacks, policy)
        self.mask, self.log = resident, []

    def resident(self, layer: int, n_experts: int) -> torch.Tensor:
        self.log.append(("resident", layer))
        return self.mask

    def routed(self, layer, routing) -> None:
        self.log.append(("routed", layer))

    def experts(self, layer, ids):
        self.log.append(("experts", layer))
        yield from super().experts(layer, ids)

    def consumed(self, layer, routing) -> None:
        self.log.append(("consumed", layer))


class _Policy:
    """Chooses the lowest-id resident experts and records what it was shown."""

    def __init__(self) -> None:
        self.calls = []

    def select(self, layer, scores, resident):
        self.calls.append((layer, tuple(scores.shape), resident.clone()))
        ids = resident.nonzero()[:, 0][: TINY.top_k].expand(scores.shape[0], -1)  # [N, k]
        return ids, torch.full(ids.shape, 1.0 / TINY.top_k)


def test_policy_reads_the_providers_residency_once_per_layer() -> None:
    """The MoE asks the provider for one residency snapshot per layer call, hands it to the
    policy with the scores, uses the policy's ids and weights, and calls the hooks in order:
    resident, routed (before any fetch), experts, consumed."""
    model = tiny_model(4)
    mask = torch.tensor([False, True, False, True, True, False, False, False])  # [E]
    policy = _Policy()
    prov = _Recorder(model.resident().stacks, policy, mask)
    with torch.no_grad():
        out = model(torch.tensor([[3, 1, 4, 1]]), provider=prov)
    assert [c[0] for c in policy.calls] == list(range(TINY.n_layers))
    assert all(c[1] == (4, TINY.n_experts) and torch.equal(c[2], mask) for c in policy.calls)
    assert all(r.ids.tolist() == [[1, 3]] * 4 for r in out.routing)
    assert prov.log == [(op, layer) for layer in range(TINY.n_layers)
                        for op in ("resident", "routed", "experts", "consumed")]


def test_no_policy_never_asks_for_residency() -> None:
    """Stock routing does not read placement at all (so it cannot depend on it)."""
    model = tiny_model(4)
    prov = _Recorder(model.resident().stacks, None, torch.ones(8, dtype=torch.bool))
    with torch.no_grad():
        model(torch.tensor([[3, 1]]), provider=prov)
    assert ("resident", 0) not in prov.log and ("routed", 0) in prov.log
