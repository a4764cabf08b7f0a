"""The corpus streams: held-out split by whole document, passages, the domain interleave.

Pinned: no document has bytes on both sides of the split (a split by byte offset would cut
one); every domain is in both streams with about HELDOUT_FRAC of its bytes held out; passages
concatenate back to their document and respect the cap; each domain's passages keep their
order; the first 2,048 held-out bytes (what the routing trace records) hold all four domains;
labels match the text; the same call gives the same bytes; the templated source is unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import ParamError
from core.model.corpus import build_corpus
from core.model.corpus_documents import (
    DOMAINS,
    HELDOUT_FRAC,
    SEPARATOR,
    Document,
    interleave,
    passages,
    split_documents,
)
from core.model.corpus_shipped import read_documents


@pytest.fixture(scope="module")
def stdlib():
    return build_corpus("stdlib")


def _toy_docs() -> list[Document]:
    return [Document(DOMAINS[i % 4], f"doc {i}\n" + "word " * (i * 40) + "\n", f"s{i}")
            for i in range(40)]


def test_split_is_by_document() -> None:
    """Each document lands whole on one side; per domain about HELDOUT_FRAC is held out."""
    docs = list(read_documents())
    train, held = split_documents(docs)
    assert {d.source for d in train}.isdisjoint({d.source for d in held})
    assert len(train) + len(held) == len(docs)
    for dom in DOMAINS:
        total = sum(len(d.text) for d in docs if d.domain == dom)
        out = sum(len(d.text) for d in held if d.domain == dom)
        assert 0.6 * HELDOUT_FRAC * total <= out <= HELDOUT_FRAC * total, dom


def test_heldout_stream_holds_whole_documents(stdlib) -> None:
    """Every held-out document's text is in the held-out stream, none in the train stream."""
    _, held = split_documents(list(read_documents()))
    text_held = stdlib.heldout.tobytes()
    text_train = stdlib.train.tobytes()
    for d in held[:: max(1, len(held) // 25)]:
        for p in passages(d.text + SEPARATOR):
            assert p.encode() in text_held
        if len(d.text) > 400:  # long enough to be unique
            assert d.text.encode()[:400] not in text_train, d.source


def test_domains_labels_and_mixing(stdlib) -> None:
    """Labels are per byte and right; the first 2,048 held-out bytes hold every domain."""
    for data, dom in ((stdlib.train, stdlib.train_domains),
                      (stdlib.heldout, stdlib.heldout_domains)):
        assert data.dtype == dom.dtype == np.uint8 and data.shape == dom.shape
        assert set(np.unique(dom).tolist()) == set(range(len(DOMAINS)))
    assert set(np.unique(stdlib.heldout_domains[:2048]).tolist()) == set(range(len(DOMAINS)))
    code = stdlib.heldout[stdlib.heldout_domains == DOMAINS.index("code")].tobytes()
    assert b"def " in code and b"import " in code
    prose = stdlib.heldout[stdlib.heldout_domains == DOMAINS.index("prose")].tobytes()
    assert prose.count(b" the ") > 100


def test_passages_round_trip() -> None:
    """Passages rebuild the text exactly, none is empty or longer than the cap."""
    text = "a\n\n" + "b" * 50 + "\n" + "c\n" * 30 + "\n\nd"
    for cap in (1, 7, 16, 1024):
        ps = passages(text, cap)
        assert "".join(ps) == text and all(0 < len(p) <= cap for p in ps)
    assert passages("") == []
    with pytest.raises(ParamError, match="cap"):
        passages("x", 0)


def test_interleave_keeps_order_and_spreads() -> None:
    """Each domain's passages stay in order; the stream alternates domains early on."""
    docs = _toy_docs()
    out = interleave(docs, cap=64)
    for di, dom in enumerate(DOMAINS):
        mine = "".join(p for d, p in out if d == di)
        assert mine == "".join(d.text + SEPARATOR for d in docs if d.domain == dom)
    assert [d for d, _ in out[:4]] == [0, 1, 2, 3]


def test_deterministic_and_split_fraction_checked(stdlib) -> None:
    """The same call gives the same bytes; a bad held-out fraction names the parameter."""
    again = build_corpus("stdlib")
    assert again.train.tobytes() == stdlib.train.tobytes()
    assert again.heldout_domains.tobytes() == stdlib.heldout_domains.tobytes()
    with pytest.raises(ParamError, match="heldout_frac"):
        split_documents(_toy_docs(), 0.9)
    with pytest.raises(ParamError, match="source"):
        build_corpus("wikipedia")


def test_templated_source_unchanged() -> None:
    """The templated corpus (what assets/model was trained on) keeps its size and domains."""
    c = build_corpus("templates")
    assert (len(c.train), len(c.heldout)) == (1_947_734, 105_712)
