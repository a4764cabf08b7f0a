"""The MoE FFN: a softmax router with exposed scores, top-k routed experts and a shared expert.

Router: scores = softmax(x W_r) over all experts [N, E]; the top-k scores are renormalised to
sum to 1 and weight the chosen experts. Expert e: w2 (silu(w1 x) * w3 x), Mixtral naming.
Routed experts are not read from this module directly but from an ExpertProvider, visited once
each in order of first appearance (row-major over the chosen ids): a loaded expert serves
every token of the call that chose it, whichever request the token belongs to.

Arithmetic: the experts' rows are gathered into one padded stack per matrix and run as one
bmm each (core/model/kernels.py: with INVARIANT kernels a row's bits then depend on it alone),
and each token adds its experts in its own top-k order (slot 0, then slot 1, ...), so a
token's bits do not depend on which other tokens chose the same experts or in what order
experts were visited; a provider that streams experts through a small cache gives the same
bits as one holding every expert (its triples are copied into the stack as they come).

Selection: with no provider, or a provider whose `policy` is None, the choice is the stock
top-k above, unchanged (the code path the shipped weights were trained with). A provider with
a SelectionPolicy (core.routing.RoutePolicy) chooses instead from the same scores and the
provider's residency snapshot for the layer (cache-aware routing). forward() tells the
provider when the layer is routed (before any expert is fetched) and when its experts were
consumed (before the next layer runs).
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from core.model.clock import timed
from core.model.config import ModelDims
from core.model.kernels import INVARIANT, Kernels, fused, transposed
from core.model.providers import AllResident, ExpertProvider
from core.model.router import Routing

PAIRS_ALONE = 8  # up to this many (token, slot) pairs, each is its own bmm entry
PAIRS_BUCKETED = 256  # from this many, experts go in buckets of similar load


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

    def route(self, x: torch.Tensor, provider: ExpertProvider | None = None,
              kx: Kernels = INVARIANT) -> Routing:
        """x [N, D] -> Routing (scores, chosen ids and weights, visit order).

        Stock top-k unless the provider carries a selection policy (module docstring).
        """
        return self._select(kx.linear(x, self.router.weight).softmax(-1), provider)

    def _select(self, scores: torch.Tensor, provider: ExpertProvider | None) -> Routing:
        """scores [N, E] -> the layer's choice (stock top-k or the provider's policy)."""
        policy = provider.policy if provider is not None else None
        if policy is None:
            top, ids = scores.topk(self.d.top_k, dim=-1)  # [N, k]
            weights = top / top.sum(-1, keepdim=True)  # [N, k]
        else:
            resident = provider.resident(self.layer, self.d.n_experts)  # [E] bool
            ids, weights = policy.select(self.layer, scores, resident)  # [N, k] each
        return Routing(scores, ids, weights, visit_order(ids))

    def forward(self, x: torch.Tensor, provider: ExpertProvider, kx: Kernels = INVARIANT
                ) -> tuple[torch.Tensor, Routing]:
        """x [..., D] -> ([..., D], Routing over the flattened tokens)."""
        flat = x.reshape(-1, x.shape[-1])  # [N, D]
        E, S = self.d.n_experts, self.d.shared_inner
        proj = kx.linear(flat, fused(self, self.router, self.shared_w1, self.shared_w3))
        logits, h1, h3 = proj.split([E, S, S], -1)  # [N, E], [N, S], [N, S]
        r = self._select(logits.softmax(-1), provider)
        provider.routed(self.layer, r)
        shared = kx.linear(kx.silu(h1) * h3, self.shared_w2.weight)  # [N, D]
        out = shared
        ys = self._stacked(flat, r, provider, kx)  # [N, k, D]
        for j in range(r.ids.shape[1]):  # each token's experts in its own top-k order
            out = out + ys[:, j]
        provider.consumed(self.layer, r)
        return out.view(x.shape), r

    def _stacked(self, flat: torch.Tensor, r: Routing, provider: ExpertProvider,
                 kx: Kernels) -> torch.Tensor:
        """Every (token, slot) pair's weighted expert output [N, k, D]. A few pairs: one bmm
        entry each. More: the pairs grouped by expert, one bmm entry per expert of the stacks
        as they lie (no weight copied), its rows padded to the busiest expert's; from
        PAIRS_BUCKETED pairs, experts in buckets of similar load, so little is padding. The
        stacks: every expert of the layer when most are chosen and all are resident, else
        the chosen ones. A row's bits depend neither on the other rows of its entry nor on the
        other entries (core/model/kernels.py)."""
        N, D = flat.shape
        k = r.ids.shape[1]
        P = N * k
        pairs = r.ids.reshape(-1)  # pair t k + j: token t, slot j
        if P <= PAIRS_ALONE:  # a decode step or two: one entry per pair, no grouping
            if type(provider) is AllResident:
                w = transposed(self, provider.stacks[self.layer])
            else:
                w, pairs = self._fetch(flat, r, provider), self._rank(r)[pairs]
            x = flat.repeat_interleave(k, 0).unsqueeze(1)  # [P, 1, D]
            y = self._ffn(x, *(s.index_select(0, pairs) for s in w), kx)  # [P, 1, D]
            return y.view(N, k, D) * r.weights.unsqueeze(-1)
        if type(provider) is AllResident and 2 * len(r.order) > self.d.n_experts:
            stacks = transposed(self, provider.stacks[self.layer])  # every expert, no copy
            col, U = pairs, self.d.n_experts
        else:
            if type(provider) is AllResident:  # a few experts: copy just those
                used = torch.tensor(r.order)
                stacks = tuple(w.index_select(0, used)
                               for w in transposed(self, provider.stacks[self.layer]))
            else:
                stacks = self._fetch(flat, r, provider)
            col, U = self._rank(r)[pairs], len(r.order)
        counts = torch.bincount(col, minlength=U)  # [U]
        by_expert = torch.argsort(col, stable=True)  # pairs grouped by expert, in token order
        slot = torch.empty_like(col)  # each pair's row within its expert's entry
        slot[by_expert] = torch.arange(P) - (counts.cumsum(0) - counts)[col[by_expert]]
        n = int(counts.max())
        if P < PAIRS_BUCKETED:  # one entry per expert: rows padded here, not in every product
            inner = stacks[0].shape[-1]
            m = max(kx.bmm_rows(D, inner), kx.bmm_rows(inner, D))  # powers of 2: a common multiple
            n = m * -(-n // m)
        index = torch.full((U, n), P, dtype=torch.long)  # P: a zero row
        index[col, slot] = torch.arange(P)  # [U, n]: each expert's pairs, then padding
        tokens = torch.where(index < P, index // k, N)  # pair -> its token; N: a zero row
        src = torch.cat([flat, flat.new_zeros(1, D)])
        if P < PAIRS_BUCKETED:  # one entry per expert of the stacks, as they lie: no copy
            y = self._ffn(src[tokens], *stacks, kx)  # [U, n, D]
            out = y.reshape(U * n, D).index_select(0, col * n + slot)  # [P, D]
            return out.view(N, k, D) * r.weights.unsqueeze(-1)
        out = flat.new_empty(P, D)
        for experts, n in _buckets(counts.tolist()):
            sel = torch.tensor(experts)
            idx = index[sel, :n]  # [b, n]
            y = self._ffn(src[tokens[sel, :n]], *(w.index_select(0, sel) for w in stacks), kx)
            real = idx < P
            out[idx[real]] = y[real]  # [pairs of the bucket, D]
        return out.view(N, k, D) * r.weights.unsqueeze(-1)

    @staticmethod
    def _ffn(x: torch.Tensor, w1t: torch.Tensor, w2t: torch.Tensor, w3t: torch.Tensor,
             kx: Kernels) -> torch.Tensor:
        """expert_ffn per bmm entry: x [U, n, D]; w1t, w3t [U, D, I]; w2t [U, I, D] (the
        weights transposed, row-major) -> [U, n, D]."""
        h = kx.silu(kx.bmm(x, w1t)) * kx.bmm(x, w3t)
        return kx.bmm(h, w2t)

    def _rank(self, r: Routing) -> torch.Tensor:
        """[E]: each chosen expert's index in r.order (-1 for the others)."""
        rank = torch.full((self.d.n_experts,), -1, dtype=torch.long)
        rank[torch.tensor(r.order)] = torch.arange(len(r.order))
        return rank

    def _fetch(self, flat: torch.Tensor, r: Routing, provider: ExpertProvider
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The chosen experts' weights, stacked in visit order (a provider's triple is valid
        only until the next one is asked for, so each is copied as it comes)."""
        U = len(r.order)
        inner, D = self.w1.shape[1:]
        w1t, w2t = flat.new_empty(U, D, inner), flat.new_empty(U, inner, D)
        w3t = flat.new_empty(U, D, inner)
        rank = {e: i for i, e in enumerate(r.order)}
        with timed("expert_loads"):
            for e, triple in provider.experts(self.layer, r.order):
                for stack, w in zip((w1t, w2t, w3t), triple, strict=True):
                    stack[rank[e]].copy_(w.t())
        return w1t, w2t, w3t


def _buckets(counts: list[int]) -> list[tuple[list[int], int]]:
    """Experts (indices into counts) in buckets of similar load, heaviest first, each with the
    rows its entries are padded to: a bucket closes when the next expert has at most half the
    rows of its first (experts with no rows are left out)."""
    order = sorted((i for i, c in enumerate(counts) if c), key=lambda i: -counts[i])
    out: list[tuple[list[int], int]] = []
    for i in order:
        if out and counts[i] * 2 > out[-1][1]:
            out[-1][0].append(i)
        else:
            out.append(([i], counts[i]))
    return out


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
