"""`python -m core.model.info`: parameter count and bytes per component of the tiny model."""

from __future__ import annotations

import sys

from core.dims import K3
from core.model.config import TOY, ModelDims


def report(dims: ModelDims = TOY) -> str:
    b = dims.bytes_per_param
    lines = [f"{'component':<34}{'params':>12}{'bytes':>14}"]
    for name, n in dims.components().items():
        lines.append(f"{name:<34}{n:>12,}{n * b:>14,}")
    lines += [
        f"{'total':<34}{dims.total_params:>12,}{dims.total_params * b:>14,}",
        f"{'trunk (one shard)':<34}{dims.trunk_params:>12,}{dims.trunk_params * b:>14,}",
        f"{'active per token':<34}{dims.active_params:>12,}{dims.active_params * b:>14,}",
        f"one routed expert: {dims.expert_params:,} params, {dims.expert_bytes:,} B "
        f"(K3: {K3.expert_params:,} params, {K3.expert_bytes:,} B bf16)",
        f"layers: {' '.join(k.upper() for k in dims.layer_kinds)}; "
        f"{dims.n_experts} experts top-{dims.top_k} + 1 shared; router: softmax",
        f"decode state: {dims.kda_state_bytes:,} B per KDA layer, "
        f"{dims.mla_bytes_per_token} B per token per MLA layer "
        f"(K3: {K3.kda_state_bytes:,} B, {K3.mla_bytes_per_token:,} B)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    print(report())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
