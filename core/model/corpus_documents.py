"""The corpus's records and the rules that turn documents into a split and byte streams.

A Document is one text of one domain (DOMAINS); a Corpus is the train and held-out byte
streams with the domain of every byte. Split: per domain, documents in sha256(source) order go
to held-out while they fit in HELDOUT_FRAC of the domain's characters; the rest train.
Streams: each document is cut into passages of at most PASSAGE_CHARS characters at blank lines
(line breaks inside longer paragraphs) and the passages of all domains are merged so that each
domain is spread evenly along the stream: any stretch of it, its first few KB included, holds
every domain. The sources (core.model.corpus_shipped, core.model.corpus_templates) build on
these; core.model.corpus chooses between them.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import numpy as np

from core.errors import check_float, check_int

DOMAINS = ("arithmetic", "records", "code", "prose")
HELDOUT_FRAC = 0.05
PASSAGE_CHARS = 1024
SEPARATOR = "\n"  # after every document's text (which ends in a newline): one blank line


@dataclass(frozen=True, slots=True)
class Document:
    domain: str
    text: str
    source: str = ""  # where the text came from: a stdlib path, a pydoc topic, a generator index


@dataclass(frozen=True, slots=True)
class Corpus:
    train: np.ndarray  # (n,) uint8
    heldout: np.ndarray  # (m,) uint8
    train_domains: np.ndarray  # (n,) uint8: DOMAINS index of each byte
    heldout_domains: np.ndarray


def _order(doc: Document) -> str:
    return hashlib.sha256((doc.source or doc.text).encode()).hexdigest()


def split_documents(docs: list[Document], heldout_frac: float = HELDOUT_FRAC
                    ) -> tuple[list[Document], list[Document]]:
    """(train, held-out) by whole document: per domain, in sha256(source) order, a document is
    held out when it still fits in heldout_frac of the domain's characters."""
    frac = check_float("heldout_frac", heldout_frac, 0.0, 0.5)
    train: list[Document] = []
    held: list[Document] = []
    for domain in DOMAINS:
        mine = sorted((d for d in docs if d.domain == domain), key=_order)
        budget = frac * sum(len(d.text) for d in mine)
        for d in mine:
            if len(d.text) <= budget:
                held.append(d)
                budget -= len(d.text)
            else:
                train.append(d)
    return train, held


def passages(text: str, cap: int = PASSAGE_CHARS) -> list[str]:
    """text cut into pieces of at most cap characters that concatenate back to text: greedy
    over paragraphs (ending at a blank line), then lines, then hard cuts of longer lines."""
    cap = check_int("cap", cap, 1)
    out: list[str] = []
    cur = ""
    for para in re.split(r"(?<=\n\n)", text):
        for line in [para] if len(para) <= cap else para.splitlines(keepends=True):
            for piece in (line[i : i + cap] for i in range(0, len(line), cap)):
                if len(cur) + len(piece) > cap:
                    out.append(cur)
                    cur = ""
                cur += piece
    return [*out, cur] if cur else out


def interleave(docs: list[Document], cap: int = PASSAGE_CHARS) -> list[tuple[int, str]]:
    """(domain index, passage) in stream order: each domain's passages keep their order and sit
    at the stream position of their start within the domain (ties: DOMAINS order)."""
    keyed = []
    for di, domain in enumerate(DOMAINS):
        pieces = [p for d in docs if d.domain == domain for p in passages(d.text + SEPARATOR, cap)]
        total, start = sum(len(p) for p in pieces), 0
        for p in pieces:
            keyed.append((start / total, di, p))
            start += len(p)
    keyed.sort(key=lambda t: (t[0], t[1]))
    return [(di, p) for _, di, p in keyed]


def to_stream(docs: list[Document], cap: int = PASSAGE_CHARS) -> tuple[np.ndarray, np.ndarray]:
    """(bytes (n,) uint8, DOMAINS index of each byte (n,) uint8) of the interleaved passages."""
    data, dom = [], []
    for di, p in interleave(docs, cap):
        b = np.frombuffer(p.encode(), np.uint8)
        data.append(b)
        dom.append(np.full(len(b), di, np.uint8))
    if not data:
        return np.zeros(0, np.uint8), np.zeros(0, np.uint8)
    return np.concatenate(data), np.concatenate(dom)


def corpus_from(docs: list[Document], heldout_frac: float = HELDOUT_FRAC) -> Corpus:
    """Split docs by document, then stream each side."""
    train, held = split_documents(docs, heldout_frac)
    (tr, trd), (he, hed) = to_stream(train), to_stream(held)
    return Corpus(tr, he, trd, hed)
