"""A step's arithmetic, in FLOPs, and this machine's matmul rate to hold it against.

step_flops(dims, report) counts 2 x multiply-adds of the real tokens a StepReport ran (padding
rows and bucket padding excluded: the work asked for, not the work done):
  dense      every projection a token passes: its active parameters, less the embedding
             (a lookup) and the routed experts not chosen (ModelDims.active_params)
  attention  MLA, absorbed (core/model/attention.py): per head, the query folded through W_k
             (e R), scores and weighted latents over the p + 1 keys it sees (2 R (p + 1)),
             lifted through W_v (R e); KDA, per head and token: decay, predict, write, read
             over the K x V state (about 4 K V), as the recurrence does it
matmul_rate(threads) times a square float32 matmul (512 x 512) best of a few: the most this
CPU's BLAS does, measured, never assumed. A step's achieved rate over it is how far from the
limit the engine runs: on a model this small, the ops are tiny and their fixed cost per call
(dispatch, Python) dominates, so the fraction is small and says why batching pays.
"""

from __future__ import annotations

import time

import torch

from core.model.config import ModelDims
from core.serve.reports import StepReport


def token_flops(dims: ModelDims, position: int) -> int:
    """FLOPs for one token at sequence position `position` (0-based)."""
    d = dims
    dense = 2 * (d.active_params - d.vocab * d.d_model)
    e, R, h = d.mla_head_dim, d.kv_latent, d.mla_heads
    mla = d.n_mla * h * 2 * (2 * e * R + 2 * R * (position + 1))
    kda = d.n_kda * d.kda_heads * 4 * d.kda_head_dim * d.kda_head_dim
    return dense + mla + kda


def step_flops(dims: ModelDims, report: StepReport) -> int:
    return sum(token_flops(dims, w.start + t) for w in report.work for t in range(w.tokens))


def matmul_rate(threads: int | None = None, n: int = 512, repeat: int = 5) -> float:
    """FLOP/s of an n x n float32 matmul on this machine (best of `repeat`)."""
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        a, b = torch.randn(n, n), torch.randn(n, n)
        a @ b
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - t0)
        return 2 * n**3 / best
    finally:
        torch.set_num_threads(before)
