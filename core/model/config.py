"""ModelDims: every dimension of the tiny hybrid model (K3's are in core.dims).

Layers follow Kimi Linear: three KDA layers then one MLA layer, repeated. Every layer's FFN is
a mixture of experts (routed top-k + one shared expert). Parameter and byte ledgers are
derived properties, so figures and the info CLI read one source of truth.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.dims import KDADims
from core.errors import ParamError, check_float, check_int


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelDims:
    vocab: int = 256  # bytes: no tokenizer to download
    d_model: int = 128
    n_layers: int = 8  # 2 x (3 KDA + 1 MLA)
    mla_every: int = 4  # an MLA layer every mla_every layers: i % mla_every == mla_every - 1
    kda_heads: int = 4
    kda_head_dim: int = 32  # d_k = d_v
    conv_size: int = 4  # short causal depthwise conv on q, k, v
    gate_rank: int = 16  # low-rank f_proj (gate) and g_proj (output gate)
    gate_lower_bound: float = -5.0  # K3 lower-bound gate
    mla_heads: int = 4
    mla_head_dim: int = 32
    kv_latent: int = 32  # MLA cache: one latent of this width per token per layer
    n_experts: int = 16
    top_k: int = 2
    expert_inner: int = 64
    shared_inner: int = 128  # one shared expert
    context: int = 256
    bytes_per_param: int = 4  # float32 on disk and in memory

    def __post_init__(self) -> None:
        for name in ("vocab", "d_model", "kda_heads", "kda_head_dim", "gate_rank", "mla_heads",
                     "mla_head_dim", "kv_latent", "expert_inner", "shared_inner", "context"):
            check_int(name, getattr(self, name), 1, 1 << 20)
        check_int("mla_every", self.mla_every, 2, 64)
        check_int("n_layers", self.n_layers, self.mla_every, 1024)
        if self.n_layers % self.mla_every:
            raise ParamError(
                f"n_layers must be a multiple of mla_every={self.mla_every}, got {self.n_layers}"
            )
        check_int("n_experts", self.n_experts, 3, 4096)
        check_int("top_k", self.top_k, 2, self.n_experts - 1)
        check_int("conv_size", self.conv_size, 2, 64)
        check_float("gate_lower_bound", self.gate_lower_bound, -88.0, -1e-6)
        check_int("bytes_per_param", self.bytes_per_param, 1, 8)

    # ---- layout ---------------------------------------------------------------------------
    def is_mla(self, layer: int) -> bool:
        return layer % self.mla_every == self.mla_every - 1

    @property
    def layer_kinds(self) -> tuple[str, ...]:
        return tuple("mla" if self.is_mla(i) else "kda" for i in range(self.n_layers))

    @property
    def kda(self) -> KDADims:
        """One KDA layer's head geometry (d_k = d_v = kda_head_dim)."""
        return KDADims(self.kda_heads, self.kda_head_dim, self.kda_head_dim)

    @property
    def kda_inner(self) -> int:
        return self.kda_heads * self.kda_head_dim

    @property
    def n_kda(self) -> int:
        return sum(k == "kda" for k in self.layer_kinds)

    @property
    def n_mla(self) -> int:
        return self.n_layers - self.n_kda

    # ---- parameter ledger -----------------------------------------------------------------
    @property
    def kda_params(self) -> int:
        D, C, H, r = self.d_model, self.kda_inner, self.kda_heads, self.gate_rank
        proj = 3 * D * C + 3 * C * self.conv_size  # q, k, v + their convs
        gates = 2 * (D * r + r * C) + D * H + H + C  # f_proj, g_proj, b_proj, A_log, dt_bias
        return proj + gates + self.kda_head_dim + C * D  # o_norm, o_proj

    @property
    def mla_params(self) -> int:
        D, Hd, R = self.d_model, self.mla_heads * self.mla_head_dim, self.kv_latent
        return D * Hd + D * R + R + 2 * R * Hd + Hd * D  # q, kv_down, kv_norm, k_up, v_up, o

    @property
    def expert_params(self) -> int:
        return 3 * self.d_model * self.expert_inner  # w1, w2, w3

    @property
    def moe_trunk_params(self) -> int:
        return self.d_model * self.n_experts + 3 * self.d_model * self.shared_inner

    @property
    def block_norm_params(self) -> int:
        return 2 * self.d_model

    @property
    def routed_params(self) -> int:
        return self.n_layers * self.n_experts * self.expert_params

    @property
    def trunk_params(self) -> int:
        mix = self.n_kda * self.kda_params + self.n_mla * self.mla_params
        per_layer = self.moe_trunk_params + self.block_norm_params
        return 2 * self.vocab * self.d_model + self.d_model + mix + self.n_layers * per_layer

    @property
    def total_params(self) -> int:
        return self.trunk_params + self.routed_params

    @property
    def active_params(self) -> int:
        return self.trunk_params + self.n_layers * self.top_k * self.expert_params

    @property
    def expert_bytes(self) -> int:
        return self.expert_params * self.bytes_per_param

    # ---- decode-state ledger (per sequence) ------------------------------------------------
    @property
    def kda_state_bytes(self) -> int:
        """Recurrent state + conv tails of one KDA layer, in bytes."""
        H, K = self.kda_heads, self.kda_head_dim
        return (H * K * K + (self.conv_size - 1) * 3 * self.kda_inner) * self.bytes_per_param

    @property
    def kda_recurrent_bytes(self) -> int:
        """The delta-rule state S of one KDA layer alone: H x d_k x d_v."""
        return self.kda_heads * self.kda_head_dim**2 * self.bytes_per_param

    @property
    def kda_conv_bytes(self) -> int:
        """The short-conv tail of one KDA layer: (conv - 1) tokens x q, k, v channels."""
        return (self.conv_size - 1) * 3 * self.kda_inner * self.bytes_per_param

    @property
    def mla_bytes_per_token(self) -> int:
        return self.kv_latent * self.bytes_per_param

    def components(self) -> dict[str, int]:
        """Parameters per component (sums to total_params)."""
        return {
            "embedding + lm_head": 2 * self.vocab * self.d_model,
            "final norm": self.d_model,
            f"KDA mixers ({self.n_kda})": self.n_kda * self.kda_params,
            f"MLA mixers ({self.n_mla})": self.n_mla * self.mla_params,
            "block norms": self.n_layers * self.block_norm_params,
            "routers + shared experts": self.n_layers * self.moe_trunk_params,
            f"routed experts ({self.n_layers} x {self.n_experts})": self.routed_params,
        }


TOY = ModelDims()
