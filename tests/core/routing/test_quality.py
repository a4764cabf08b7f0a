"""Output-quality helpers: the held-out passage a seed names, and the comparisons of two passes.

Pinned: a seed names one passage (same bytes every call, starting at a line start, exactly n
bytes); teacher_forced scores every next byte (its NLL is -log softmax, its argmax the logits'
argmax); compare() is 0 / 1 / None for identical passes and finds the first disagreement.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.errors import ParamError
from core.routing import heldout_text, teacher_forced
from core.routing.quality import Scored, compare, first_divergence, heldout_corpus


def test_a_seed_names_one_passage() -> None:
    a = heldout_text(5, 100)
    assert a == heldout_text(5, 100) and len(a) == 100 and a != heldout_text(6, 100)
    data = heldout_corpus()
    start = data.find(a)
    assert start == 0 or data[start - 1 : start] == b"\n"
    with pytest.raises(ParamError, match="seed"):
        heldout_text(-1, 10)


@torch.no_grad()
def test_teacher_forced_scores_each_next_byte(tiny) -> None:
    text = b"ab = 12\n"
    got = teacher_forced(tiny, text)
    state = tiny.new_state(1)
    for t in range(len(text) - 1):
        logits = tiny.step(torch.tensor([text[t]]), state).logits[0]
        assert got.nll[t] == pytest.approx(-float(logits.double().log_softmax(-1)[text[t + 1]]))
        assert got.argmax[t] == int(logits.argmax())
    assert got.nll.shape == (len(text) - 1,)


def test_compare_and_first_divergence() -> None:
    a = Scored(np.array([1.0, 2.0, 3.0]), np.array([4, 5, 6]))
    b = Scored(np.array([1.0, 2.5, 3.0]), np.array([4, 9, 6]))
    assert compare(a, a).delta_nll == 0.0 and compare(a, a).first_divergence is None
    q = compare(b, a)
    assert q.delta_nll == pytest.approx(0.5 / 3) and q.greedy_agree == pytest.approx(2 / 3)
    assert q.first_divergence == 1
    assert first_divergence(b"abc", b"abc") is None
    assert first_divergence(b"abx", b"abc") == 2 and first_divergence(b"ab", b"abc") == 2
