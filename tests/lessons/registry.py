"""The claim registry: every number and every "because" a student reads, computed by a test.

A claim is a sentence fragment of one lesson written as a format template, e.g.
`"LRU hits nothing below {cliff} slots"`, and a function that computes its fields from the
engine (never from the lesson, never from a verdict the engine wrote itself) and returns them
as a dict; it may also assert the reason behind the sentence. The test formats the template
with the computed fields and requires the result, character for character, in the lesson. So a
change to the engine that moves a number, or an edit to the lesson that changes it, fails CI
until the two agree again. Fields use str.format specs: `{hit:.0%}`, `{ratio:.1f}`, `{n:,}`.

Coverage: after every formatted claim is cut out of a lesson, no digit may remain outside
NAMES (identifiers such as K3, P95, bf16 that contain a digit but state no quantity).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

LESSONS = Path(__file__).resolve().parents[2] / "assets" / "lessons"

# Identifiers with a digit that state no quantity: system and format names, percentile labels.
NAMES = re.compile(
    r"\b(?:K3|P50|P95|P99|bf16|fp8|fp16|fp32|MXFP4|float32|float64|int64|sha256|L1|L2|"
    r"kimi-k3-in-c|safetensors|x86-64|UTF-8|H200|H100|HTTP/2)\b"
)


@dataclass(frozen=True, slots=True)
class Claim:
    lesson: str  # assets/lessons/<lesson>.md
    template: str  # a fragment of that lesson with {fields}
    check: Callable[[], Mapping[str, object]]

    @property
    def name(self) -> str:
        return f"{self.lesson}:{self.check.__name__}"

    def sentence(self) -> str:
        return " ".join(self.template.format(**self.check()).split())


CLAIMS: list[Claim] = []


def claim(lesson: str, template: str) -> Callable[[Callable[[], Mapping[str, object]]],
                                                   Callable[[], Mapping[str, object]]]:
    """Register fn as the check behind `template` in `lesson`; fn returns the fields."""
    def register(fn: Callable[[], Mapping[str, object]]) -> Callable[[], Mapping[str, object]]:
        CLAIMS.append(Claim(lesson, template, fn))
        return fn
    return register


def lesson_text(lesson: str) -> str:
    """The lesson with every run of whitespace made one space (templates may span lines)."""
    return " ".join((LESSONS / f"{lesson}.md").read_text(encoding="utf-8").split())


def uncovered_numbers(text: str, sentences: list[str]) -> list[str]:
    """Digit-bearing words of text left after cutting out the sentences and NAMES."""
    for s in sorted(sentences, key=len, reverse=True):
        text = text.replace(s, " ")
    text = NAMES.sub(" ", text)
    text = re.sub(r"\(#[^)]*\)|<[^>]+>|https?://\S+", " ", text)  # links, anchors, html tags
    return [w for w in re.findall(r"\S*\d\S*", text)]
