"""The MoE FFN: a softmax router with exposed scores, top-k routed experts and a shared expert.

Router: scores = softmax(x W_r) over all experts [N, E]; the top-k scores are renormalised to
sum to 1 and weight the chosen experts. Expert e: w2 (silu(w1 x) * w3 x), Mixtral naming.
Routed experts are not read from this module directly but from an ExpertProvider, visited in
order of first appearance (row-major over the chosen ids); every expert's output is computed
from its weights at once and then added, so a provider that streams experts through a small
cache gives the same bits as one holding every expert.

Selection: with no provider, or a provider whose `policy` is None, the choice is the stock
top-k above, unchanged (the code path the shipped weights were trained with). A provider with
a SelectionPolicy (core.routing.RoutePolicy) chooses instead from the same scores and the
provider's residency snapshot for the layer (cache-aware routing). forward() tells the
provider when the layer is routed (before any expert is fetched) and when its experts were
consumed (before the next layer runs).
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import torch
import torch.nn as nn
import torch.nn.functional as F

from core.model.config import ModelDims
from core.model.experts import ExpertProvider


class Routing(NamedTuple):
    """One layer's routing for N tokens."""

    scores: torch.Tensor  # [N, E] softmax over experts
    ids: torch.Tensor  # [N, k] int64, chosen experts in descending score
    weights: torch.Tensor  # [N, k] renormalised top-k scores
    order: tuple[int, ...]  # experts in the order they were fetched (the layer's demand)


class SelectionPolicy(Protocol):
    def select(self, layer: int, scores: torch.Tensor, resident: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """scores [N, E], resident bool [E] -> (ids [N, k] int64, weights [N, k], rows sum to 1)."""
        ...


def visit_order(ids: torch.Tensor) -> tuple[int, ...]:
    """Unique experts of ids [N, k] in order of first appearance, row-major."""
    return tuple(dict.fromkeys(ids.flatten().tolist()))


def expert_ffn(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, w3: torch.Tensor
               ) -> torch.Tensor:
    """x [n, D]; w1, w3 [I, D]; w2 [D, I] -> [n, D]."""
    return F.linear(F.silu(F.linear(x, w1)) * F.linear(x, w3), w2)


class MoE(nn.Module):
    def __init__(self, d: ModelDims, layer: int) -> None:
        super().__init__()
        self.d, self.layer = d, layer
        D, E, inner = d.d_model, d.n_experts, d.expert_inner
        self.router = nn.Linear(D, E, bias=False)
        self.shared_w1 = nn.Linear(D, d.shared_inner, bias=False)
        self.shared_w2 = nn.Linear(d.shared_inner, D, bias=False)
        self.shared_w3 = nn.Linear(D, d.shared_inner, bias=False)
        # The resident copy of the routed experts (training, AllResident); [E, ...] stacks.
        self.w1 = nn.Parameter(torch.randn(E, inner, D) / D**0.5)
        self.w2 = nn.Parameter(torch.randn(E, D, inner) / inner**0.5)
        self.w3 = nn.Parameter(torch.randn(E, inner, D) / D**0.5)

    def route(self, x: torch.Tensor, provider: ExpertProvider | None = None) -> Routing:
        """x [N, D] -> Routing (scores, chosen ids and weights, visit order).

        Stock top-k unless the provider carries a selection policy (module docstring).
        """
        scores = self.router(x).softmax(-1)  # [N, E]
        policy = provider.policy if provider is not None else None
        if policy is None:
            top, ids = scores.topk(self.d.top_k, dim=-1)  # [N, k]
            weights = top / top.sum(-1, keepdim=True)  # [N, k]
        else:
            resident = provider.resident(self.layer, self.d.n_experts)  # [E] bool
            ids, weights = policy.select(self.layer, scores, resident)  # [N, k] each
        return Routing(scores, ids, weights, visit_order(ids))

    def forward(self, x: torch.Tensor, provider: ExpertProvider) -> tuple[torch.Tensor, Routing]:
        """x [B, T, D] -> ([B, T, D], Routing over the B*T tokens)."""
        B, T, D = x.shape
        flat = x.reshape(B * T, D)  # [N, D]
        r = self.route(flat, provider)
        provider.routed(self.layer, r)
        out = F.linear(F.silu(self.shared_w1(flat)) * self.shared_w3(flat), self.shared_w2.weight)
        for e, (w1, w2, w3) in provider.experts(self.layer, r.order):
            rows, slot = (r.ids == e).nonzero(as_tuple=True)  # tokens routed to e, in order
            y = expert_ffn(flat[rows], w1, w2, w3) * r.weights[rows, slot, None]  # [n, D]
            out = out.index_add(0, rows, y)
        provider.consumed(self.layer, r)
        return out.view(B, T, D), r


def balance_loss(r: Routing, n_experts: int) -> torch.Tensor:
    """Switch-style load balance: E * sum_e (fraction routed to e) * (mean score of e)."""
    frac = torch.zeros(n_experts).index_add_(0, r.ids.flatten(),
                                             torch.ones(r.ids.numel())) / r.ids.numel()
    return n_experts * (frac * r.scores.mean(0)).sum()


def naive_moe(moe: MoE, x: torch.Tensor) -> torch.Tensor:
    """The whiteboard form: every expert on every token, masked by the top-k weights.

    x [B, T, D] -> [B, T, D]; reads the module's resident experts. Slow (E x the FLOPs).
    """
    flat = x.reshape(-1, x.shape[-1])  # [N, D]
    r = moe.route(flat)
    gate = torch.zeros_like(r.scores).scatter(1, r.ids, r.weights)  # [N, E], k nonzeros a row
    h = F.silu(torch.einsum("nd,eid->nei", flat, moe.w1)) * torch.einsum(
        "nd,eid->nei", flat, moe.w3)  # [N, E, I]
    routed = torch.einsum("nei,edi,ne->nd", h, moe.w2, gate)  # [N, D]
    shared = moe.shared_w2(F.silu(moe.shared_w1(flat)) * moe.shared_w3(flat))  # [N, D]
    return (shared + routed).view_as(x)
