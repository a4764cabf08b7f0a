"""Cache-aware routing: why PILOT predicts some layers well and layer 1 badly.

PILOT predicts layer L+1's experts by applying layer L+1's norm and router to the stream it
taps after layer L's mixer (core.routing.prefetch). How well that works depends on how close
the tapped stream is to the stream layer L+1's router really reads (after layer L's experts
and layer L+1's mixer). This measures both on the routing sweep's scored passage (held-out
text; routing_sweep.texts), teacher-forced in one forward (stock top-k, every expert resident),
per predicted layer L+1 = 1 .. n_layers - 1:

  recall        PILOT's recall@top_k against the experts the layer then used
  cosine        mean cosine between the tapped stream and the router's real input stream
  after_recall  the same prediction from the stream after layer L's experts (the block's
                output, before layer L+1's mixer): a tap that misses only L+1's mixer
  after_cosine  its mean cosine with the router's real input stream

pilot_alignment(seed) -> PilotAlignment   cached (single-flight); seed picks the passage (the
                                          sweep's is SEED)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from core.errors import check_int
from core.experiments.flight import single_flight
from core.experiments.routing_sweep import texts
from core.experiments.shipped import model as shipped_model
from core.routing.ranking import top_ranks


@dataclass(frozen=True, slots=True, kw_only=True)
class PilotAlignment:
    seed: int
    positions: int
    layers: tuple[int, ...]  # the predicted layers, 1 .. n_layers - 1
    recall: tuple[float, ...]
    cosine: tuple[float, ...]
    after_recall: tuple[float, ...]
    after_cosine: tuple[float, ...]

    def at(self, layer: int) -> int:
        return self.layers.index(layer)


def _recall(pred: torch.Tensor, used: torch.Tensor) -> float:
    """pred, used [T, k] expert ids: mean share of each row's used ids that were predicted."""
    hits = (pred.unsqueeze(-1) == used.unsqueeze(-2)).any(-2).sum()
    return float(hits) / used.numel()


@single_flight(8)
def pilot_alignment(seed: int) -> PilotAlignment:
    m = shipped_model()
    text = texts(check_int("seed", seed, 0, 1 << 16))[1]
    mixed: dict[int, torch.Tensor] = {}  # layer -> [T, D] stream after its mixer (PILOT's tap)
    entering: dict[int, torch.Tensor] = {}  # layer -> [T, D] stream entering the block
    hooks = []
    for i, b in enumerate(m.blocks):
        hooks.append(b.norm2.register_forward_pre_hook(
            lambda _m, args, i=i: mixed.__setitem__(i, args[0].detach()[0])))
        hooks.append(b.norm1.register_forward_pre_hook(
            lambda _m, args, i=i: entering.__setitem__(i, args[0].detach()[0])))
    try:
        with torch.no_grad():
            m(torch.tensor([list(text)], dtype=torch.long))
    finally:
        for h in hooks:
            h.remove()
    k, cos = m.dims.top_k, torch.nn.functional.cosine_similarity
    layers = tuple(range(1, m.dims.n_layers))
    out: dict[str, list[float]] = {"recall": [], "cosine": [], "after_recall": [],
                                   "after_cosine": []}
    with torch.no_grad():
        for layer in layers:
            b = m.blocks[layer]

            def scores(x: torch.Tensor, b=b) -> torch.Tensor:  # [T, D] -> [T, E]
                return b.moe.router(b.norm2(x)).softmax(-1)
            real = mixed[layer]
            used = scores(real).topk(k, dim=-1).indices  # [T, k] stock top-k
            for tag, tap in (("", mixed[layer - 1]), ("after_", entering[layer])):
                out[f"{tag}recall"].append(_recall(top_ranks(scores(tap), k), used))
                out[f"{tag}cosine"].append(float(cos(tap, real, dim=-1).mean()))
    return PilotAlignment(seed=seed, positions=len(text), layers=layers,
                          **{key: tuple(v) for key, v in out.items()})
