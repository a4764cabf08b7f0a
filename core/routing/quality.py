"""Output quality of a routing, step by step with a warm cache: teacher-forced NLL and argmax.

The meters in core.routing.meters restate the swap rate; this measures what the swaps do to
the model's predictions. `teacher_forced` feeds held-out text one byte at a time through
HybridLM.step (never one wide batch: a prefill sees one stale residency snapshot for all its
rows and substitutes far fewer slots than decoding does, reference section 9) and returns,
for every position after the first, the NLL of the true next byte (nats) and the argmax.
compare() turns a run and the stock run into delta NLL per byte, greedy agreement (the
fraction of positions whose argmax is stock's) and the first position where they differ.

Held-out text: `heldout_text(seed, n)` takes n bytes of the corpus's held-out stream
(core.model.corpus.build_corpus, its public API only), starting at a seeded position moved to
the next line start, so each seed names one passage, the same on every machine.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from core.errors import ParamError, check_int

if TYPE_CHECKING:
    from core.model.model import HybridLM
    from core.model.providers import ExpertProvider


@functools.lru_cache(maxsize=1)
def heldout_corpus() -> bytes:
    """The corpus's held-out bytes (built once)."""
    from core.model.corpus import build_corpus

    return bytes(build_corpus().heldout)


def heldout_text(seed: int, n: int) -> bytes:
    """n bytes of held-out corpus text, from a line start picked by seed."""
    check_int("seed", seed, 0)
    data = heldout_corpus()
    n = check_int("n", n, 2, len(data) // 2)
    start = int(np.random.default_rng(seed).integers(0, len(data) - 2 * n))
    nl = data.find(b"\n", start, start + n)
    start = nl + 1 if nl >= 0 else start
    return data[start : start + n]


@dataclass(frozen=True, slots=True)
class Scored:
    """A teacher-forced pass: position t predicts byte t + 1 of the text."""

    nll: np.ndarray  # (T - 1,) float64, nats
    argmax: np.ndarray  # (T - 1,) int64

    @property
    def nll_per_byte(self) -> float:
        return float(self.nll.mean())


@torch.no_grad()
def teacher_forced(model: HybridLM, text: bytes, provider: ExpertProvider | None = None
                   ) -> Scored:
    """Step through text byte by byte (batch 1) and score every next byte."""
    if not isinstance(text, bytes) or len(text) < 2:
        raise ParamError("text must be at least 2 bytes")
    state = model.new_state(1)
    nll, top = [], []
    for t in range(len(text) - 1):
        logits = model.step(torch.tensor([text[t]]), state, provider).logits[0]  # [V]
        logp = logits.double().log_softmax(-1)  # [V]
        nll.append(-float(logp[text[t + 1]]))
        top.append(int(logits.argmax()))
    return Scored(np.array(nll), np.array(top, dtype=np.int64))


@dataclass(frozen=True, slots=True)
class Quality:
    delta_nll: float  # nats per byte, this run minus stock (0.0 exactly when identical)
    greedy_agree: float  # fraction of positions whose argmax is stock's
    first_divergence: int | None  # first position whose argmax differs (None: none does)


def compare(run: Scored, stock: Scored) -> Quality:
    """Quality of `run` against the stock pass over the same text."""
    if run.nll.shape != stock.nll.shape:
        raise ParamError("the two passes must score the same text")
    same = run.argmax == stock.argmax
    diff = np.flatnonzero(~same)
    return Quality(run.nll_per_byte - stock.nll_per_byte, float(same.mean()),
                   int(diff[0]) if diff.size else None)


def first_divergence(a: bytes, b: bytes) -> int | None:
    """First index where two generations differ (a length mismatch counts); None if equal."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))
