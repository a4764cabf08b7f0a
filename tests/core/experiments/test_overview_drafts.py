"""KnownText, the always-right drafter: it proposes exactly the known continuation, and refuses
a history that left the known text (its drafts would no longer be greedy's)."""

from __future__ import annotations

import pytest

from core.errors import ParamError
from core.experiments.overview_drafts import KnownText


def test_proposes_the_continuation() -> None:
    d = KnownText(b"abcdefgh")
    assert d.propose(b"abc", 3) == b"def"
    assert d.propose(bytearray(b"abcdef"), 5) == b"gh"  # runs out at the end of the text
    assert d.propose(b"abcdefgh", 2) == b""


def test_refuses_a_foreign_history() -> None:
    with pytest.raises(ParamError):
        KnownText(b"abcdefgh").propose(b"abX", 2)
