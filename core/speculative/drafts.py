"""Speculative rollback for KDA: replay raw inputs instead of snapshotting the state.

A draft window holds the per-position projections (q, k, v, g, beta) of D draft tokens, with
the draft axis where fla puts T: q, k, g [B, D, H, K]; v [B, D, H, V]; beta [B, D, H].
After verification accepts n drafts, `verify_and_replay` folds exactly those n positions into a
clone of the committed state with `kda_step`, the same arithmetic as `kda_recurrent`, so the
result equals the recurrence over the committed tokens bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from core.errors import ParamError, check_float, check_int
from core.kda import check_tokens, kda_step


@dataclass(frozen=True, slots=True, kw_only=True)
class DraftProjections:
    """Raw inputs of D draft positions: q, k, g [B, D, H, K]; v [B, D, H, V]; beta [B, D, H]."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    g: torch.Tensor
    beta: torch.Tensor

    def __post_init__(self) -> None:
        check_tokens(self.q, self.k, self.v, self.g, self.beta, None, step=False)

    @property
    def draft_len(self) -> int:
        """D, the number of draft positions."""
        return self.q.shape[1]

    def prefix(self, n: int) -> DraftProjections:
        """The first n drafts (views), n in [0, D]."""
        n = check_int("n", n, 0, self.draft_len)
        return self.map(lambda x: x[:, :n])

    def map(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> DraftProjections:
        """fn applied to each of q, k, v, g, beta (a slice, a row, a cast)."""
        return DraftProjections(q=fn(self.q), k=fn(self.k), v=fn(self.v), g=fn(self.g),
                                beta=fn(self.beta))

    @staticmethod
    def from_random(
        B: int,
        D: int,
        H: int,
        dk: int,
        dv: int,
        dtype: torch.dtype = torch.float32,
        seed: int = 0,
        gate_lower_bound: float = -5.0,
    ) -> DraftProjections:
        """Deterministic drafts: L2-normalised q, k; g uniform in [lb, 0]; beta in (0, 1).

        Sampled in float64 from a torch.Generator seeded with `seed`, then cast to dtype, so
        every dtype sees the same values up to rounding.
        """
        B, H = check_int("B", B, 1, 4096), check_int("H", H, 1, 4096)
        D = check_int("D", D, 0, 1 << 20)
        dk, dv = check_int("dk", dk, 1, 4096), check_int("dv", dv, 1, 4096)
        check_int("seed", seed, 0)
        lb = check_float("gate_lower_bound", gate_lower_bound, -88.0, 0.0)
        gen = torch.Generator().manual_seed(seed)

        def randn(*shape: int) -> torch.Tensor:
            return torch.randn(*shape, generator=gen, dtype=torch.float64)

        q = F.normalize(randn(B, D, H, dk), dim=-1)  # [B, D, H, K]
        k = F.normalize(randn(B, D, H, dk), dim=-1)  # [B, D, H, K]
        v = randn(B, D, H, dv)  # [B, D, H, V]
        g = lb * torch.rand(B, D, H, dk, generator=gen, dtype=torch.float64)  # [B, D, H, K]
        beta = torch.sigmoid(randn(B, D, H))  # [B, D, H]
        return DraftProjections(q=q.to(dtype), k=k.to(dtype), v=v.to(dtype), g=g.to(dtype),
                                beta=beta.to(dtype))


def verify_and_replay(
    committed_state: torch.Tensor,
    drafts: DraftProjections,
    n_accepted: int,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Replay the first n accepted drafts from a clone of the committed state.

    committed_state [B, H, K, V] is never mutated (it is shared with the cache). Returns
    (new_state [B, H, K, V], outputs [B, n, H, V]), outputs in fla's T-position layout.
    n = 0 returns a clone of committed_state and an empty [B, 0, H, V].
    """
    if not isinstance(drafts, DraftProjections):
        raise ParamError(f"drafts must be a DraftProjections, got {type(drafts).__name__}")
    n = check_int("n_accepted", n_accepted, 0, drafts.draft_len)
    if not isinstance(committed_state, torch.Tensor):
        raise ParamError(
            f"committed_state must be a tensor [B, H, K, V], got {type(committed_state).__name__}"
        )
    check_tokens(drafts.q, drafts.k, drafts.v, drafts.g, drafts.beta, committed_state, step=False)
    state = committed_state.clone()
    outputs = []
    for t in range(n):
        o_t, state = kda_step(
            drafts.q[:, t], drafts.k[:, t], drafts.v[:, t], drafts.g[:, t], drafts.beta[:, t],
            state, scale,
        )
        outputs.append(o_t)
    if not outputs:
        B, _, H, V = drafts.v.shape
        return state, drafts.v.new_zeros(B, 0, H, V)
    return state, torch.stack(outputs, dim=1)  # [B, n, H, V]
