"""Verify a draft window in one pass with plain decode's arithmetic, then commit a prefix of it.

`verify_window(model, tokens, state)` feeds T tokens (the pending token and T - 1 drafts) from
a DecodeState (one sequence) as one recurrent group of HybridLM.run: KDA by kda_step per
position, every projection, norm, router and expert a row of the batch. With INVARIANT kernels
a row's bits do not depend on the other rows (core/model/kernels.py), so row t of the logits
is, BIT FOR BIT, what T calls of HybridLM.step give at position t; a one-token window IS
HybridLM.step. With a selection policy (cache-aware routing) the window is routed on one
residency snapshot, which sequential steps would not see: exactness is for stock top-k.

The state is NOT advanced. `commit(state, window, n)` advances it by the first n positions:
  KDA   rollback by replay: verify_and_replay folds the n accepted raw inputs into the committed
        S (core.speculative); n == T adopts the window's last state (nothing to undo). The conv
        tail is the last W - 1 rows of (committed tail, the n accepted pre-conv rows).
  MLA   the n accepted latents are appended; rejected ones are dropped.
so a committed state equals n HybridLM.step calls bit for bit. The engine commits its requests'
windows with the same two functions (`commit_kda`), straight into their pages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from core.errors import ParamError
from core.model.kernels import INVARIANT, Kernels
from core.model.layers import KDAOut, KDAState
from core.model.model import DecodeState, Group, HybridLM
from core.model.providers import ExpertProvider
from core.model.router import Routing
from core.speculative import verify_and_replay

MAX_WINDOW = 64


@dataclass(frozen=True)
class Window:
    """A verified window: logits per position, per-layer tentative records, the routing."""

    tokens: tuple[int, ...]
    logits: torch.Tensor  # [T, V]
    layers: tuple[KDAOut | torch.Tensor, ...]  # KDAOut, or MLA latents [1, T, R]
    routing: tuple[Routing, ...]  # one per layer, over the T positions

    @property
    def size(self) -> int:
        return len(self.tokens)

    def greedy(self) -> list[int]:
        """The model's argmax at every position (row t: the token after tokens[t])."""
        return self.logits.argmax(-1).tolist()


@torch.no_grad()
def verify_window(model: HybridLM, tokens: list[int] | tuple[int, ...], state: DecodeState,
                  provider: ExpertProvider | None = None, kernels: Kernels = INVARIANT
                  ) -> Window:
    """Logits of T tokens fed from `state` (batch of one); the state is left unchanged."""
    T = len(tokens)
    if not 1 <= T <= MAX_WINDOW:
        raise ParamError(f"tokens must hold 1 to {MAX_WINDOW} ids, got {T}")
    if len(state.tokens) != 1:
        raise ParamError(f"state must hold one sequence, got {len(state.tokens)}")
    if any(not isinstance(t, int) or not 0 <= t < model.dims.vocab for t in tokens):
        raise ParamError(f"tokens must be ids in [0, {model.dims.vocab - 1}], got {tokens!r}")
    states = [s if isinstance(s, KDAState) else [s.latent[0]] for s in state.layers]
    group = Group(tokens=torch.tensor([list(tokens)]), states=states, recurrent=True,
                  keep_inputs=True)
    out = model.run([group], provider, kernels)
    g = out.groups[0]
    return Window(tokens=tuple(tokens), logits=g.logits[0], layers=g.layers,
                  routing=out.routing)


def commit_kda(S: torch.Tensor, conv: torch.Tensor, rec: KDAOut, n: int
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """One KDA layer's committed (S, conv tail) after n of the window's T positions, from the
    state before the window ([1, ...]) and the window's record (row 0 of a group's)."""
    if rec.inputs is None or n == rec.inputs.draft_len:
        return rec.S, rec.conv  # the whole window kept: nothing to undo
    S_n, _ = verify_and_replay(S, rec.inputs, n)  # rollback: the committed S, replayed
    W = conv.shape[1]
    tail = torch.cat([conv, rec.conv_rows[:, :n]], 1)[:, n : n + W]  # [1, W - 1, 3C]
    return S_n, tail


def commit(state: DecodeState, window: Window, n: int,
           on_replay: Callable[[int], None] | None = None) -> int:
    """Advance `state` by the window's first n positions (1 <= n <= T); returns the positions
    replayed per KDA layer (0 when the whole window is kept)."""
    T = window.size
    if not 1 <= n <= T:
        raise ParamError(f"n must be in [1, {T}] (the window's positions), got {n}")
    replayed = 0 if n == T else n
    for s, rec in zip(state.layers, window.layers, strict=True):
        if isinstance(s, KDAState):
            assert isinstance(rec, KDAOut)
            s.S, s.conv = commit_kda(s.S, s.conv, rec, n)
        else:
            s.latent = torch.cat([s.latent, rec[:, :n]], 1)  # [1, L + n, R]
    state.pos += n
    state.tokens[0].extend(window.tokens[:n])
    if on_replay is not None:
        on_replay(replayed)
    return replayed
