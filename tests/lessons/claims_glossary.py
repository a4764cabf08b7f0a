"""Claims of the glossary: the K3 dimensions from core.dims, definitions checked by computing."""

from __future__ import annotations

import math

import numpy as np

from core.dims import K3
from core.fleet.metrics import percentile
from core.model.config import ModelDims
from tests.lessons.registry import claim


@claim("glossary", "{layers} layers ({kda} KDA, {mla} MLA; {moe} of them MoE), {experts} routed "
       "experts per MoE layer of which each token uses {k}.")
def k3_dims() -> dict[str, object]:
    assert K3.n_kda + K3.n_mla == K3.n_layers
    return {"layers": K3.n_layers, "kda": K3.n_kda, "mla": K3.n_mla, "moe": K3.n_moe,
            "experts": K3.n_experts, "k": K3.top_k}


@claim("glossary", "the {nth}th percentile: {nth}% of the measured values are at or below it.")
def p95() -> dict[str, object]:
    x = np.arange(1, 101, dtype=float)
    p = percentile(x, 95)
    assert (x <= p).mean() >= 0.95
    return {"nth": 95}


@claim("glossary", "divided by the mean; {zero} means perfectly even.")
def cv_zero() -> dict[str, object]:
    even = np.full(8, 3.0)
    return {"zero": int(even.std() / even.mean())}


@claim("glossary", "lower is better, and {bits} means no better than guessing.")
def bits_per_byte_of_guessing() -> dict[str, object]:
    return {"bits": int(math.log2(ModelDims().vocab))}  # uniform over 256 byte values
