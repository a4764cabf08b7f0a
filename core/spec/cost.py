"""The byte model of a rollback: one state snapshot per draft position vs the raw inputs.

Per layer and sequence (reference §5): a snapshot holds H dk dv state_bytes per position; the
raw inputs that rebuild it hold H (dk k_bytes + dv v_bytes + dk g_bytes + beta_bytes), plus
H dk q_bytes when the replay must also re-emit outputs. The ratio is independent of H and of
the draft length.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import check_int


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
