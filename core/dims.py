"""Dimensions shared across subsystems: KDA head geometry and Kimi K3 at checkpoint scale.

One source of truth for every K3 number the lab prints (reference §1). The tiny model's own
dims live in core.model.config.ModelDims; the replay tabs use REPLAY_TOY on purpose (small
enough to print every number), which differs from the model's KDA heads (H=4, d=32).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import ParamError, check_int


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


REPLAY_TOY = KDADims(H=4, dk=16, dv=16)

MXFP4_BLOCK = 32  # one E8M0 scale byte per 32 FP4 values (16 packed bytes)


def mxfp4_bytes(params: int) -> int:
    """Bytes of `params` values stored MXFP4: a nibble each plus one scale byte per block."""
    if params <= 0 or params % MXFP4_BLOCK:
        raise ParamError(f"params must be a positive multiple of {MXFP4_BLOCK}, got {params}")
    return params // 2 + params // MXFP4_BLOCK


@dataclass(frozen=True, slots=True, kw_only=True)
class K3Dims:
    """Kimi K3 at checkpoint scale (reference §1): ledgers only, never instantiated."""

    n_layers: int = 93
    n_kda: int = 69
    n_mla: int = 24
    n_dense: int = 1  # layers with a dense FFN instead of MoE (reference: 92 MoE layers)
    d_model: int = 7168
    kda_heads: int = 96
    kda_head_dim: int = 128
    conv_size: int = 4
    kv_latent: int = 512
    qk_rope: int = 64
    n_experts: int = 896
    top_k: int = 16
    n_shared: int = 2
    expert_inner: int = 3072
    expert_latent: int = 3584
    bytes_per_param: int = 2  # bf16
    gate_lower_bound: float = -5.0  # KDA's forget gate lies in [gate_lower_bound, 0] per step

    @property
    def kda(self) -> KDADims:
        """One KDA layer's head geometry."""
        return KDADims(self.kda_heads, self.kda_head_dim, self.kda_head_dim)

    @property
    def n_moe(self) -> int:
        """Layers whose FFN is a mixture of experts."""
        return self.n_layers - self.n_dense

    @property
    def expert_params(self) -> int:
        return 3 * self.expert_latent * self.expert_inner  # 33.0 M

    @property
    def expert_bytes(self) -> int:
        return self.expert_params * self.bytes_per_param

    @property
    def expert_mxfp4_bytes(self) -> int:
        """One routed expert as the expert cache reads it (MXFP4): 17,547,264 B."""
        return mxfp4_bytes(self.expert_params)

    @property
    def kda_state_bytes(self) -> int:
        """fp32 recurrent state of one KDA layer (6 MiB)."""
        return self.kda_heads * self.kda_head_dim**2 * 4

    @property
    def kda_conv_bytes(self) -> int:
        """bf16 short-conv tail of one KDA layer: (conv - 1) tokens x q, k, v channels (216 KiB)."""
        return (self.conv_size - 1) * 3 * self.kda_heads * self.kda_head_dim * self.bytes_per_param

    @property
    def mla_bytes_per_token(self) -> int:
        return (self.kv_latent + self.qk_rope) * self.bytes_per_param  # 1,152 B


K3 = K3Dims()


def k3_group_blocks(block_tokens: int = 512) -> float:
    """One K3 checkpoint group (every KDA layer's fp32 S + bf16 conv tail) in units of one
    block of MLA latents over every MLA layer: about 31.7 at 512 tokens (reference §1)."""
    group = K3.n_kda * (K3.kda_state_bytes + K3.kda_conv_bytes)
    return group / (K3.n_mla * K3.mla_bytes_per_token * check_int("block_tokens", block_tokens, 1))
