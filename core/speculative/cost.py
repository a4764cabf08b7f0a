"""The byte model of a rollback: one state snapshot per window position vs the raw inputs.

Per layer and sequence (reference §5): a snapshot holds H dk dv state_bytes per position; the
raw inputs that rebuild it hold H (dk k_bytes + dv v_bytes + dk g_bytes + beta_bytes), plus
H dk q_bytes when the replay must also re-emit outputs. The ratio is independent of H and of
the draft length.

The lab's one convention (both replay tabs, every figure): K3's storage dtypes, fp32 state and
gate, bf16 k, v, beta and short-conv rows, and no q (replay only rebuilds the state; the
outputs of the window being verified come from the forward pass itself). `LayerBytes` adds the
short-conv window: each position's pre-conv q|k|v row, H (2 dk + dv) conv_bytes, and the
W - 1 rows of history the next token's convolution reads. Both schemes keep the same conv
window, so it adds the same bytes to each.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.dims import K3, KDADims
from core.errors import ParamError, check_int


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


@dataclass(frozen=True, slots=True)
class LayerBytes:
    """One KDA layer's rollback pieces for one sequence, in bytes (the convention above)."""

    state: int  # H dk dv: the recurrent state S
    raw: int  # one position's k, v, g, beta
    conv_row: int = 0  # one position's pre-conv q|k|v row; 0 without a short conv
    conv_history: int = 0  # W - 1: rows of history the next token's convolution reads

    def __post_init__(self) -> None:
        check_int("state", self.state, 1)
        check_int("raw", self.raw, 1)
        check_int("conv_row", self.conv_row, 0)
        check_int("conv_history", self.conv_history, 0, 63)
        if (self.conv_row == 0) != (self.conv_history == 0):
            raise ParamError(
                f"conv_row and conv_history must both be 0 (no conv) or both > 0, got "
                f"conv_row={self.conv_row}, conv_history={self.conv_history}"
            )

    @property
    def per_position_ratio(self) -> float:
        """Snapshot / raw bytes for one position, the short-conv row counted in both."""
        return (self.state + self.conv_row) / (self.raw + self.conv_row)

    def conv_window(self, positions: int) -> int:
        """Bytes of a conv window over `positions` new rows plus the history."""
        return (self.conv_history + check_int("positions", positions, 0)) * self.conv_row

    def without_conv(self) -> LayerBytes:
        return LayerBytes(self.state, self.raw)


def layer_bytes(dims: KDADims, conv_size: int = K3.conv_size, conv_bytes: int = 2) -> LayerBytes:
    """The convention's bytes for one layer of `dims` with a short conv of `conv_size` taps.

    conv_size 1 (a pointwise map) or 0 (none) keeps no history, so nothing rolls back.
    """
    if not isinstance(dims, KDADims):
        raise ParamError(f"dims must be a KDADims, got {type(dims).__name__}")
    W = check_int("conv_size", conv_size, 0, 64)
    c = rollback_bytes(dims.H, dims.dk, dims.dv, 1)
    if W <= 1:
        return LayerBytes(c.snapshot_bytes_per_step, c.raw_bytes_per_step)
    row = dims.H * (2 * dims.dk + dims.dv) * check_int("conv_bytes", conv_bytes, 1, 8)
    return LayerBytes(c.snapshot_bytes_per_step, c.raw_bytes_per_step, row, W - 1)
