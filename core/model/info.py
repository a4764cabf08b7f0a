"""`python -m core.model.info`: parameter count and bytes per component of the tiny model, and
the serving bytes it shares with K3, compared like for like.

The expert cache the lab models (kimi-k3-in-c) reads K3's routed experts as MXFP4: 4-bit values
plus one E8M0 scale byte per MXFP4_BLOCK values, 17,547,264 B per expert (reference §2), not
the bf16 size K3Dims.expert_bytes gives. The tiny model stores everything in float32. KDA state
compares S with S and S + conv tail with S + conv tail.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from core.dims import K3, mxfp4_bytes
from core.model.config import TOY, ModelDims

__all__ = ["K3_EXPERT_MXFP4_BYTES", "mxfp4_bytes", "report", "serving_bytes"]

K3_EXPERT_MXFP4_BYTES = K3.expert_mxfp4_bytes  # 17,547,264 = 4,284 pages of 4 KiB


class Serving(NamedTuple):
    """One serving quantity in bytes, toy vs K3, with how each side is stored."""

    name: str
    toy: int
    k3: int
    k3_format: str

    @property
    def ratio(self) -> float:
        return self.k3 / self.toy


def serving_bytes(dims: ModelDims = TOY) -> tuple[Serving, ...]:
    """Per-expert, per-layer-state and per-token bytes the serving subsystems move, toy vs K3."""
    return (
        Serving("one routed expert", dims.expert_bytes, K3_EXPERT_MXFP4_BYTES, "MXFP4"),
        Serving("KDA state S, 1 layer", dims.kda_recurrent_bytes, K3.kda_state_bytes, "fp32"),
        Serving("KDA state S + conv tail, 1 layer", dims.kda_state_bytes,
                K3.kda_state_bytes + K3.kda_conv_bytes, "fp32 S, bf16 conv"),
        Serving("MLA latent, 1 token, 1 layer", dims.mla_bytes_per_token,
                K3.mla_bytes_per_token, "bf16"),
    )


def report(dims: ModelDims = TOY) -> str:
    b = dims.bytes_per_param
    lines = [f"{'component':<34}{'params':>12}{'bytes':>14}"]
    for name, n in dims.components().items():
        lines.append(f"{name:<34}{n:>12,}{n * b:>14,}")
    lines += [
        f"{'total':<34}{dims.total_params:>12,}{dims.total_params * b:>14,}",
        f"{'trunk (one shard)':<34}{dims.trunk_params:>12,}{dims.trunk_params * b:>14,}",
        f"{'active per token':<34}{dims.active_params:>12,}{dims.active_params * b:>14,}",
        f"layers: {' '.join(k.upper() for k in dims.layer_kinds)}; "
        f"{dims.n_experts} experts top-{dims.top_k} + 1 shared; router: softmax",
        "serving bytes, toy (float32) vs K3:",
    ]
    for s in serving_bytes(dims):
        lines.append(f"  {s.name:<34}{s.toy:>12,}{s.k3:>14,} {s.k3_format:<18}{s.ratio:>8,.1f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    print(report())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
