"""Speculative vs plain greedy side by side: the same bytes, acceptance in [0, 1], a speedup.

Pinned: compare_decoding returns both reports for one prompt with identical text (the engine's
oracle), acceptance = accepted / drafted of the speculative side, bytes per pass = generated
bytes / decode passes (a repetitive prompt averages more than one byte per pass: drafts are
accepted), a positive measured speedup; gamma_sweep covers each draft length; bad knobs raise
ParamError naming the knob. Times are measured, so no test compares two of them.
"""

from __future__ import annotations

import pytest

from core.errors import ParamError
from core.serve.compare import compare_decoding, gamma_sweep
from core.serve.prompts import prompt

pytestmark = pytest.mark.usefixtures("one_thread")


def test_repetitive_code_is_accepted_and_identical(shipped):
    c = compare_decoding(shipped, prompt("code"), 12, 4, repeat=1)
    assert c.same_text and c.plain.text == shipped.generate(prompt("code"), 12)
    s = c.spec.spec
    assert c.acceptance == s.accepted / s.drafted
    assert c.bytes_per_pass == 12 / (1 + len(c.spec.verify)) > 1
    assert c.speedup > 0


def test_gamma_sweep_covers_each_draft_length(shipped):
    sweep = gamma_sweep(shipped, "prose", gammas=(1, 3), n_new=6)
    assert [c.draft_len for c in sweep] == [1, 3] and all(c.same_text for c in sweep)


@pytest.mark.parametrize(("call", "name"), [
    (lambda m: gamma_sweep(m, "poetry"), "kind"),
    (lambda m: gamma_sweep(m, "code", gammas=()), "gammas"),
    (lambda m: compare_decoding(m, b"x", 4, 0), "draft_len"),
    (lambda m: compare_decoding(m, b"x", 0, 2), "n_new"),
    (lambda m: compare_decoding(m, b"x", 4, 2, repeat=0), "repeat"),
])
def test_bad_knobs_name_the_knob(shipped, call, name):
    with pytest.raises(ParamError, match=name):
        call(shipped)
