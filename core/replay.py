"""Speculative rollback for KDA: replay raw inputs instead of snapshotting the state.

A draft window holds the per-position projections (q, k, v, g, beta) of D draft tokens, with
the draft axis where fla puts T: q, k, g [B, D, H, K]; v [B, D, H, V]; beta [B, D, H].
After verification accepts n drafts, `verify_and_replay` folds exactly those n positions into a
clone of the committed state with `kda_step`, the same arithmetic as `kda_recurrent`, so the
result equals the recurrence over the committed tokens bit for bit.

The byte model (`rollback_bytes`) compares one snapshot of the state per draft position with
the raw inputs that rebuild it; the ratio is independent of H and of the draft length.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from core.errors import ParamError, check_float, check_int
from core.kda import check_tokens, kda_step


@dataclass(frozen=True, slots=True)
class KDADims:
    """KDA head geometry for one layer: H heads, key width dk, value width dv."""

    H: int
    dk: int
    dv: int

    def __post_init__(self) -> None:
        for name in ("H", "dk", "dv"):
            check_int(name, getattr(self, name), 1, 1 << 16)

    @property
    def state_numel(self) -> int:
        """Elements of one layer's state per sequence: H * dk * dv."""
        return self.H * self.dk * self.dv


TOY = KDADims(H=4, dk=16, dv=16)
KIMI_LINEAR = KDADims(H=32, dk=128, dv=128)
K3 = KDADims(H=96, dk=128, dv=128)
K3_DIMS = K3
K3_KDA_LAYERS = 69  # K3: 93 layers = 69 KDA + 24 MLA (reference §1)


@dataclass(frozen=True, slots=True)
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
        return DraftProjections(*(x[:, :n] for x in (self.q, self.k, self.v, self.g, self.beta)))

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
        return DraftProjections(*(x.to(dtype) for x in (q, k, v, g, beta)))


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


@dataclass(frozen=True, slots=True)
class ReplayCost:
    """Bytes per layer and sequence to undo a rejected draft window of draft_len positions."""

    snapshot_bytes_per_step: int
    raw_bytes_per_step: int
    draft_len: int

    @property
    def snapshot_bytes(self) -> int:
        """One full state snapshot per draft position."""
        return self.snapshot_bytes_per_step * self.draft_len

    @property
    def raw_bytes(self) -> int:
        """The raw inputs of every draft position."""
        return self.raw_bytes_per_step * self.draft_len

    @property
    def saved_bytes(self) -> int:
        """The absolute gap; it grows linearly with the draft length."""
        return self.snapshot_bytes - self.raw_bytes

    @property
    def ratio(self) -> float:
        """snapshot / raw, independent of H and of the draft length."""
        return self.snapshot_bytes_per_step / self.raw_bytes_per_step


def rollback_bytes(
    H: int,
    dk: int,
    dv: int,
    draft_len: int,
    state_bytes: int = 4,
    k_bytes: int = 2,
    v_bytes: int = 2,
    g_bytes: int = 4,
    beta_bytes: int = 2,
    include_q: bool = False,
    q_bytes: int = 2,
) -> ReplayCost:
    """Snapshot vs raw-input bytes per layer (reference §5).

    Snapshot per step: H dk dv state_bytes. Raw per step: H (dk k_bytes + dv v_bytes + dk g_bytes
    + beta_bytes), plus H dk q_bytes when the replay must also re-emit outputs (include_q).
    """
    H = check_int("H", H, 1, 1 << 16)
    dk, dv = check_int("dk", dk, 1, 1 << 16), check_int("dv", dv, 1, 1 << 16)
    draft_len = check_int("draft_len", draft_len, 0, 1 << 20)
    widths = {"state_bytes": state_bytes, "k_bytes": k_bytes, "v_bytes": v_bytes,
              "g_bytes": g_bytes, "beta_bytes": beta_bytes, "q_bytes": q_bytes}
    w = {name: check_int(name, value, 1, 8) for name, value in widths.items()}
    raw = dk * w["k_bytes"] + dv * w["v_bytes"] + dk * w["g_bytes"] + w["beta_bytes"]
    if include_q:
        raw += dk * w["q_bytes"]
    return ReplayCost(H * dk * dv * w["state_bytes"], H * raw, draft_len)
