"""Prefix cache, the partial preset as a curve: how far a trusted partial group's error reaches.

The partial preset's group (at the hit's boundary, a checkpoint every block) lacks one KDA
layer's state. Trusting it anyway (check_groups=False) resumes that layer from an empty state;
every token recomputed after the boundary decays the wrong state further, so the error depends
on how far past the boundary the request ends. For each distance d this serves REQUEST cut at
boundary + d tokens on a fork of the tab's engine, unsafely, and compares its last logits with
a cold forward of the same tokens (one forward of REQUEST gives every prefix's logits):

  PartialCurve   layer (the KDA layer the group lacks), boundary (tokens), distances,
                 max_abs (max |unsafe - cold| of the last logits, per d), next_byte and
                 cold_next_byte (the greedy next byte of each run: where they differ, trusting
                 the group changed the text), margin (the cold logits' top-two gap at each d:
                 the size a difference needs to change the next byte)

partial_curve(layer, distances)  cached (single-flight); distances are tokens past the boundary,
                                 1 .. len(REQUEST) - boundary (the preset itself is the last)
FULL = every distance: what the figure draws (error against the distance past the boundary)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from core.errors import ParamError, check_int
from core.experiments.flight import single_flight
from core.experiments.prefix import base, deepest_group, drop_layer, fork
from core.experiments.scenes import REQUEST
from core.experiments.shipped import model as shipped_model

CHECKPOINT_EVERY = 1  # the tab's default spacing: a group at every block boundary


@dataclass(frozen=True, slots=True, kw_only=True)
class PartialCurve:
    layer: int
    boundary: int
    distances: tuple[int, ...]
    max_abs: tuple[float, ...]
    next_byte: tuple[int, ...]
    cold_next_byte: tuple[int, ...]
    margin: tuple[float, ...]

    def at(self, d: int) -> int:
        """Index of distance d."""
        return self.distances.index(d)


@single_flight(1)
def _cold() -> torch.Tensor:
    """[T, V]: cold logits after every prefix of REQUEST."""
    with torch.no_grad():
        return shipped_model()(torch.tensor([list(REQUEST)], dtype=torch.long)).logits[0]


def boundary_tokens() -> int:
    eng = base(CHECKPOINT_EVERY)
    return eng.cache.lookup(REQUEST).boundary_blocks * eng.P


def full_distances() -> tuple[int, ...]:
    return tuple(range(1, len(REQUEST) - boundary_tokens() + 1))


@single_flight(16)
def partial_curve(layer: int, distances: tuple[int, ...]) -> PartialCurve:
    n_kda = shipped_model().dims.n_kda
    layer = check_int("layer", layer, 0, n_kda - 1)
    b = boundary_tokens()
    if not distances or any(not 1 <= d <= len(REQUEST) - b for d in distances):
        raise ParamError(f"distances must lie in 1..{len(REQUEST) - b}, got {distances}")
    cold = _cold()
    errs, nxt, cold_nxt, margins = [], [], [], []
    for d in distances:
        eng = fork(base(CHECKPOINT_EVERY))
        drop_layer(eng, deepest_group(eng, REQUEST), layer)
        report = eng.prefill(REQUEST[: b + d], check_groups=False)
        if report.reused_tokens != b:
            raise RuntimeError(f"the unsafe lookup resumed at {report.reused_tokens}, not {b}")
        c = cold[b + d - 1]
        top2 = torch.topk(c, 2).values
        errs.append(float((report.last_logits - c).abs().max()))
        nxt.append(int(report.last_logits.argmax()))
        cold_nxt.append(int(c.argmax()))
        margins.append(float(top2[0] - top2[1]))
    return PartialCurve(layer=layer, boundary=b, distances=tuple(distances),
                        max_abs=tuple(errs), next_byte=tuple(nxt),
                        cold_next_byte=tuple(cold_nxt), margin=tuple(margins))
