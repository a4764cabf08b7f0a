"""Causal sentences of a lesson, and the allow-list of sentences whose word is not causal.

causal_sentences(raw) splits a lesson's markdown into sentences (paragraphs, list items, the
folded blocks; then at ". " before a capital) and returns, whitespace-normalised and with
their offsets in the normalised text (registry.lesson_text), those that hold a word of CAUSAL:
because, so, since, which is why, the reason, drives, causes. Each such sentence needs a reason
claim (registry.reason) whose template overlaps it, or an entry in NOT_CAUSAL: a fragment of
the sentence and why its word states no cause there ("so" as "so that", "so far", ...).
"""

from __future__ import annotations

import re
from typing import NamedTuple

CAUSAL = re.compile(r"\b(?:because|so|since|which is why|the reason|drives|causes)\b",
                    re.IGNORECASE)

# lesson -> ((a fragment of the sentence, why its causal word states no cause there), ...)
NOT_CAUSAL: dict[str, tuple[tuple[str, str], ...]] = {
    "prefix": (
        ("a chained hash of all tokens so far", "'so far': up to now"),
    ),
    "glossary": (
        ("so the request finds it resident", "'so' as 'so that': what a prefetch is for, its "
         "purpose, not a claim about why something happens"),
        ("so a new prompt with the same start skips", "'so' as 'so that': what a prefix cache "
         "is for, its purpose"),
    ),
}


class Sentence(NamedTuple):
    start: int  # offset in the whitespace-normalised lesson
    text: str
    words: tuple[str, ...]  # the causal words it holds


def _pieces(raw: str) -> list[str]:
    raw = re.sub(r"<[^>]+>", "\n\n", raw)  # html tags (details, summary) end a block
    blocks = re.split(r"\n\s*\n|\n(?=\s*[-*] )|\n(?=#)", raw)
    out = []
    for b in blocks:
        b = " ".join(b.split())
        out += [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z*\[(])", b) if s]
    return out


def causal_sentences(raw: str) -> list[Sentence]:
    """The sentences of a lesson's markdown that hold a causal word, in order."""
    norm = " ".join(raw.split())
    at, out = 0, []
    for piece in _pieces(raw):
        start = norm.find(piece, at)
        if start < 0:  # only a tag separated it: place it after the last one found
            start = at
        at = start + len(piece)
        words = tuple(w.lower() for w in CAUSAL.findall(piece))
        if words:
            out.append(Sentence(start, piece, words))
    return out


def allowed(lesson: str, sentence: str) -> bool:
    return any(frag in sentence for frag, _ in NOT_CAUSAL.get(lesson, ()))
