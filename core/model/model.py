"""HybridLM: bytes -> [KDA, KDA, KDA, MLA] x n -> logits, every FFN a mixture of experts.

Three entry points share every weight and the same code per layer:
  forward(idx)               training / prefill over [B, T] (state None: no caching)
  forward(idx, state)        prefill that leaves a DecodeState behind
  step(tok, state)           one token per sequence with kda_step, the conv tail, latent KV
Routed experts come from an ExpertProvider (default: this module's own, all resident).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import torch
import torch.nn as nn

from core.errors import ParamError, check_int
from core.model.config import ModelDims
from core.model.experts import AllResident, ExpertProvider
from core.model.layers import KDA, MLA, KDAState, MLAState, RMSNorm
from core.model.moe import MoE, Routing


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


class Block(nn.Module):
    def __init__(self, d: ModelDims, layer: int) -> None:
        super().__init__()
        self.kind = "mla" if d.is_mla(layer) else "kda"
        self.norm1 = RMSNorm(d.d_model)
        self.mixer = MLA(d) if self.kind == "mla" else KDA(d)
        self.norm2 = RMSNorm(d.d_model)
        self.moe = MoE(d, layer)

    def forward(self, x: torch.Tensor, state: KDAState | MLAState | None,
                provider: ExpertProvider, step: bool, capture_at: tuple[int, ...] = ()
                ) -> tuple[torch.Tensor, Routing]:
        """x [B, T, D] -> ([B, T, D], routing); step=True: T == 1 and state is required."""
        h = self.norm1(x)
        if step:
            mixed = self.mixer.step(h, state)
        elif capture_at and self.kind == "kda":
            mixed = self.mixer(h, state, capture_at)
        else:
            mixed = self.mixer(h, state)
        x = x + mixed  # [B, T, D]
        y, r = self.moe(self.norm2(x), provider)
        return x + y, r


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

    def forward(self, idx: torch.Tensor, state: DecodeState | None = None,
                provider: ExpertProvider | None = None, capture_at: tuple[int, ...] = ()
                ) -> Output:
        """idx [B, T] int64 -> logits [B, T, V]; with a state, continue it and advance it.

        capture_at (needs a state, no grad): positions of this call, multiples of 64, after
        which every KDA layer copies its state into its KDAState.captured (prefix checkpoints).
        """
        provider = provider or self.resident()
        self._check_tokens("idx", idx, 2)
        if capture_at and (state is None or torch.is_grad_enabled()):
            raise ParamError("capture_at needs a DecodeState and torch.no_grad()")
        x = self.embed(idx)  # [B, T, D]
        routing = []
        for i, b in enumerate(self.blocks):
            x, r = b(x, state.layers[i] if state is not None else None, provider, step=False,
                     capture_at=capture_at)
            routing.append(r)
        if state is not None:
            state.pos += idx.shape[1]
            for row, toks in zip(idx.tolist(), state.tokens, strict=True):
                toks.extend(row)
        return Output(self.lm_head(self.norm(x)), tuple(routing))

    def step(self, tok: torch.Tensor, state: DecodeState,
             provider: ExpertProvider | None = None) -> Output:
        """tok [B] int64 -> logits [B, V]; advances state by one token."""
        provider = provider or self.resident()
        self._check_tokens("tok", tok, 1)
        if len(state.tokens) != tok.shape[0]:
            raise ParamError(f"tok must have one entry per sequence of the state "
                             f"({len(state.tokens)}), got {tok.shape[0]}")
        x = self.embed(tok[:, None])  # [B, 1, D]
        routing = []
        for i, b in enumerate(self.blocks):
            x, r = b(x, state.layers[i], provider, step=True)
            routing.append(r)
        state.pos += 1
        for t, toks in zip(tok.tolist(), state.tokens, strict=True):
            toks.append(t)
        return Output(self.lm_head(self.norm(x))[:, 0], tuple(routing))

    @torch.no_grad()
    def generate(self, prompt: bytes, n_new: int, provider: ExpertProvider | None = None,
                 routing: list[tuple[Routing, ...]] | None = None) -> bytes:
        """Greedy: prefill the prompt (chunked KDA), then n_new steps; appends to routing."""
        if not isinstance(prompt, bytes) or not prompt:
            raise ParamError(f"prompt must be non-empty bytes, got {prompt!r}")
        n_new = check_int("n_new", n_new, 0)
        state = self.new_state(1)
        idx = torch.tensor([list(prompt)], dtype=torch.long)  # [1, T]
        out = self.forward(idx, state, provider)
        logits = out.logits[:, -1]  # [1, V]
        if routing is not None:
            routing.append(out.routing)
        new = []
        for _ in range(n_new):
            tok = logits.argmax(-1)  # [1]
            new.append(int(tok))
            out = self.step(tok, state, provider)
            logits = out.logits
            if routing is not None:
                routing.append(out.routing)
        return bytes(new)
