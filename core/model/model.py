"""HybridLM: bytes -> [KDA, KDA, KDA, MLA] x n -> logits, every FFN a mixture of experts.

One batched forward, `run(groups)`, answers a ragged batch: groups of G sequences feeding T
tokens each, in one KDA mode (chunked prefill or recurrent steps), each with its own state;
every group's tokens share the dense projections, the router and the experts of every layer.
It never changes a state; it returns what each sequence's state would become (per layer:
KDAOut, or the new MLA latents), and the caller commits it. Three entry points are run():
  forward(idx)               training / prefill over [B, T] (state None: no caching)
  forward(idx, state)        prefill that advances a DecodeState
  step(tok, state)           one token per sequence: kda_step, the conv tail, latent KV
The serving engine (core/serve) builds its own groups: prefill chunks, decode tokens and
verify windows of different requests in one call. Arithmetic: core/model/kernels.py, INVARIANT
by default (a token's bits depend only on it and the tokens before it), FAST on request.
Routed experts come from an ExpertProvider (default: this module's own, all resident).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import torch
import torch.nn as nn

from core.errors import ParamError, check_int
from core.model.config import ModelDims
from core.model.kernels import INVARIANT, Kernels
from core.model.layers import KDA, GroupView, KDAOut, KDAState, MLAState, RMSNorm
from core.model.mla import MLA
from core.model.moe import MoE
from core.model.providers import AllResident, ExpertProvider
from core.model.router import Routing

LOGITS = ("all", "last", "none")


class Output(NamedTuple):
    logits: torch.Tensor  # [B, T, V] (forward) or [B, V] (step)
    routing: tuple[Routing, ...]  # one per layer


@dataclass(slots=True)
class DecodeState:
    """Everything one batch of sequences carries between tokens."""

    layers: list[KDAState | MLAState]
    pos: int = 0
    tokens: list[list[int]] = field(default_factory=list)

    def nbytes(self) -> int:
        n = 0
        for s in self.layers:
            ts = (s.conv, s.S) if isinstance(s, KDAState) else (s.latent,)
            n += sum(t.numel() * t.element_size() for t in ts)
        return n


LayerIn = KDAState | Sequence[torch.Tensor]  # KDA: G-batched state; MLA: G past latents [L, R]


@dataclass(frozen=True, slots=True, kw_only=True)
class Group:
    """G sequences that each feed T tokens, in one mode, to one batched forward."""

    tokens: torch.Tensor  # [G, T] int64
    states: Sequence[LayerIn] | None = None  # per layer; None: fresh sequences
    recurrent: bool = False  # KDA by kda_step per token (decode, verify); else chunked (prefill)
    capture_at: tuple[int, ...] = ()  # chunked: KDA states kept after these positions (x 64)
    keep_inputs: bool = False  # recurrent: keep KDA's raw inputs (rollback by replay)
    logits: str = "all"  # "all": [G, T, V]; "last": [G, V]; "none"


@dataclass(frozen=True, slots=True)
class GroupOut:
    logits: torch.Tensor | None  # as the group asked
    layers: tuple[KDAOut | torch.Tensor, ...]  # per layer: KDAOut, or new MLA latents [G, T, R]


@dataclass(frozen=True, slots=True)
class BatchOut:
    groups: tuple[GroupOut, ...]
    routing: tuple[Routing, ...]  # per layer, over the batch's tokens: groups in order, row-major


class Block(nn.Module):
    def __init__(self, d: ModelDims, layer: int) -> None:
        super().__init__()
        self.kind = "mla" if d.is_mla(layer) else "kda"
        self.norm1 = RMSNorm(d.d_model)
        self.mixer = MLA(d) if self.kind == "mla" else KDA(d)
        self.norm2 = RMSNorm(d.d_model)
        self.moe = MoE(d, layer)

    def forward(self, x: torch.Tensor, groups: Sequence[GroupView], states: Sequence[object],
                provider: ExpertProvider, kx: Kernels
                ) -> tuple[torch.Tensor, list[KDAOut | torch.Tensor], Routing]:
        """x [1, N, D] (the batch as one row of N tokens) -> ([1, N, D], per group, routing)."""
        h = self.norm1(x, kx)
        mixed, outs = self.mixer.forward_groups(h[0], groups, states, kx)
        x = x + mixed.unsqueeze(0)  # [1, N, D]
        y, r = self.moe(self.norm2(x, kx), provider, kx)
        return x + y, outs, r


class HybridLM(nn.Module):
    def __init__(self, d: ModelDims) -> None:
        super().__init__()
        self.dims = d
        self.embed = nn.Embedding(d.vocab, d.d_model)
        self.blocks = nn.ModuleList(Block(d, i) for i in range(d.n_layers))
        self.norm = RMSNorm(d.d_model)
        self.lm_head = nn.Linear(d.d_model, d.vocab, bias=False)
        self.apply(self._init)

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def _check_tokens(self, name: str, x: object, rank: int) -> None:
        if not isinstance(x, torch.Tensor) or x.dtype != torch.long or x.dim() != rank:
            raise ParamError(f"{name} must be a {rank}-D int64 tensor of byte ids")
        if x.numel() and (int(x.min()) < 0 or int(x.max()) >= self.dims.vocab):
            raise ParamError(f"{name} must hold ids in [0, {self.dims.vocab - 1}]")

    def resident(self) -> AllResident:
        return AllResident([(b.moe.w1, b.moe.w2, b.moe.w3) for b in self.blocks])

    def new_state(self, B: int = 1) -> DecodeState:
        like = self.embed.weight
        return DecodeState([b.mixer.init_state(B, like) for b in self.blocks],
                           tokens=[[] for _ in range(B)])

    # ---- the batched forward ---------------------------------------------------------------
    def run(self, groups: Sequence[Group], provider: ExpertProvider | None = None,
            kernels: Kernels = INVARIANT) -> BatchOut:
        """One forward over every group's tokens (module docstring); no state is changed."""
        provider = provider or self.resident()
        views, start = [], 0
        for g in groups:
            self._check_tokens("tokens", g.tokens, 2)
            G, T = g.tokens.shape
            if T < 1 or G < 1 or g.logits not in LOGITS:
                raise ParamError(f"a group needs G, T >= 1 and logits in {LOGITS}, got "
                                 f"{(G, T)} and {g.logits!r}")
            if g.capture_at and (g.recurrent or torch.is_grad_enabled()):
                raise ParamError("capture_at needs a chunked group under torch.no_grad()")
            views.append(GroupView(start=start, G=G, T=T, recurrent=g.recurrent,
                                   capture_at=g.capture_at, keep_inputs=g.keep_inputs))
            start += G * T
        idx = torch.cat([g.tokens.reshape(-1) for g in groups])  # [N]
        x = self.embed(idx).unsqueeze(0)  # [1, N, D]
        per_group: list[list[KDAOut | torch.Tensor]] = [[] for _ in groups]
        routing = []
        for i, b in enumerate(self.blocks):
            states = [g.states[i] if g.states is not None else None for g in groups]
            x, outs, r = b(x, views, states, provider, kernels)
            for acc, o in zip(per_group, outs, strict=True):
                acc.append(o)
            routing.append(r)
        h = self.norm(x, kernels)[0]  # [N, D]
        wanted = []
        for v, g in zip(views, groups, strict=True):
            if g.logits == "all":
                wanted.append(torch.arange(v.start, v.start + v.G * v.T))
            elif g.logits == "last":
                wanted.append(torch.arange(v.G) * v.T + v.start + v.T - 1)
        rows = torch.cat(wanted) if wanted else torch.zeros(0, dtype=torch.long)
        logits = kernels.linear(h[rows], self.lm_head.weight)  # [n_wanted, V]
        outs, at = [], 0
        for v, g, acc in zip(views, groups, per_group, strict=True):
            lg = None
            if g.logits == "all":
                lg, at = logits[at : at + v.G * v.T].view(v.G, v.T, -1), at + v.G * v.T
            elif g.logits == "last":
                lg, at = logits[at : at + v.G], at + v.G
            outs.append(GroupOut(logits=lg, layers=tuple(acc)))
        return BatchOut(groups=tuple(outs), routing=tuple(routing))

    # ---- a DecodeState's entry points --------------------------------------------------------
    def _group(self, idx: torch.Tensor, state: DecodeState | None, **kw: object) -> Group:
        states = None
        if state is not None:
            states = [s if isinstance(s, KDAState) else list(s.latent.unbind(0))
                      for s in state.layers]
        return Group(tokens=idx, states=states, **kw)

    @staticmethod
    def _commit(state: DecodeState, idx: torch.Tensor, out: GroupOut) -> None:
        for s, o in zip(state.layers, out.layers, strict=True):
            if isinstance(s, KDAState):
                assert isinstance(o, KDAOut)
                s.S, s.conv, s.captured = o.S, o.conv, list(o.captured)
            else:
                s.latent = torch.cat([s.latent, o], 1)  # [B, t + T, R]
        state.pos += idx.shape[1]
        for row, toks in zip(idx.tolist(), state.tokens, strict=True):
            toks.extend(row)

    def forward(self, idx: torch.Tensor, state: DecodeState | None = None,
                provider: ExpertProvider | None = None, capture_at: tuple[int, ...] = (),
                kernels: Kernels = INVARIANT) -> Output:
        """idx [B, T] int64 -> logits [B, T, V]; with a state, continue it and advance it.

        capture_at (needs a state, no grad): positions of this call, multiples of 64, after
        which every KDA layer copies its state into its KDAState.captured (prefix checkpoints).
        """
        self._check_tokens("idx", idx, 2)
        if capture_at and (state is None or torch.is_grad_enabled()):
            raise ParamError("capture_at needs a DecodeState and torch.no_grad()")
        out = self.run([self._group(idx, state, capture_at=capture_at)], provider, kernels)
        if state is not None:
            self._commit(state, idx, out.groups[0])
        return Output(out.groups[0].logits, out.routing)

    def step(self, tok: torch.Tensor, state: DecodeState,
             provider: ExpertProvider | None = None, kernels: Kernels = INVARIANT) -> Output:
        """tok [B] int64 -> logits [B, V]; advances state by one token."""
        self._check_tokens("tok", tok, 1)
        if len(state.tokens) != tok.shape[0]:
            raise ParamError(f"tok must have one entry per sequence of the state "
                             f"({len(state.tokens)}), got {tok.shape[0]}")
        idx = tok[:, None]  # [B, 1]
        out = self.run([self._group(idx, state, recurrent=True)], provider, kernels)
        self._commit(state, idx, out.groups[0])
        return Output(out.groups[0].logits[:, 0], out.routing)

    @torch.no_grad()
    def generate(self, prompt: bytes, n_new: int, provider: ExpertProvider | None = None,
                 routing: list[tuple[Routing, ...]] | None = None,
                 kernels: Kernels = INVARIANT) -> bytes:
        """Greedy: prefill the prompt (chunked KDA), then n_new steps; appends to routing."""
        if not isinstance(prompt, bytes) or not prompt:
            raise ParamError(f"prompt must be non-empty bytes, got {prompt!r}")
        n_new = check_int("n_new", n_new, 0)
        state = self.new_state(1)
        idx = torch.tensor([list(prompt)], dtype=torch.long)  # [1, T]
        out = self.forward(idx, state, provider, kernels=kernels)
        logits = out.logits[:, -1]  # [1, V]
        if routing is not None:
            routing.append(out.routing)
        new = []
        for _ in range(n_new):
            tok = logits.argmax(-1)  # [1]
            new.append(int(tok))
            out = self.step(tok, state, provider, kernels)
            logits = out.logits
            if routing is not None:
                routing.append(out.routing)
        return bytes(new)
