"""The claim registry: every number and every "because" a student reads, computed by a test.

A claim is a sentence fragment of one lesson written as a format template, e.g.
`"LRU hits nothing below {cliff} slots"`, and a function that computes its fields from the
engine (never from the lesson, never from a verdict the engine wrote about itself: a claim
reads the values and makes the comparison) and returns them as a dict. The test formats the
template with the computed fields and requires the result, character for character, in the
lesson. So a change to the engine that moves a number, or an edit to the lesson that changes
it, fails CI until the two agree again. Fields use str.format specs: `{hit:.0%}`, `{n:,}`.

A reason is a claim about why (`@reason`): its function returns a `Reason`, a counterfactual
computed from the engine. It names the effect the sentence explains and its value at the
lesson's setting; the cause the sentence names, changed, with the effect measured again and
the direction (and optionally the least size) of the change the sentence predicts; and a
rival cause, changed while the named cause is held, with the effect measured again and a
named tolerance it must stay within. `judge` compares the values; the claim asserts nothing
the engine concluded itself.

Coverage:
- numbers: after every formatted claim is cut out of a lesson, no digit may remain outside
  NAMES (identifiers such as K3, P95, bf16 that contain a digit but state no quantity);
- reasons: every sentence that holds a causal word (CAUSAL) overlaps the text a reason's
  template matches in that lesson, unless the sentence is on the allow-list (causal.py),
  which says for each entry why its word is not causal there.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

LESSONS = Path(__file__).resolve().parents[2] / "assets" / "lessons"

# Identifiers with a digit that state no quantity: system and format names, percentile labels.
NAMES = re.compile(
    r"\b(?:K3|P50|P95|P99|bf16|fp8|fp16|fp32|MXFP4|float32|float64|int64|sha256|L1|L2|"
    r"kimi-k3-in-c|safetensors|x86-64|UTF-8|H200|H100|HTTP/2)\b"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Within:
    """A named tolerance: x stays within it of base when |x - base| <= abs + rel * |base|."""

    name: str
    abs: float = 0.0
    rel: float = 0.0

    def holds(self, base: float, x: float) -> bool:
        return abs(x - base) <= self.abs + self.rel * abs(base)


@dataclass(frozen=True, kw_only=True)
class Reason:
    """A counterfactual behind one causal sentence, as values (see the module docstring)."""

    fields: Mapping[str, object] = field(default_factory=dict)  # the template's fields
    effect: str  # what the sentence explains, with its unit
    base: float  # the effect at the lesson's setting
    cause: str  # the cause the sentence names, and how the test changes it
    changed: float | Sequence[float]  # the effect once the cause is changed (one per change)
    expect: str  # "up" or "down": the direction the sentence predicts
    at_least: float = 0.0  # the predicted size: every |changed - base| must reach it
    rival: str  # a rival cause, and how the test changes it with the cause held
    rival_effects: Sequence[float]  # the effect under each change of the rival
    within: Within  # how far the rival may move the effect


def judge(r: Reason) -> list[str]:
    """What is wrong with a reason's counterfactual, compared from its values (empty: holds)."""
    problems: list[str] = []
    changed = [r.changed] if isinstance(r.changed, (int, float)) else list(r.changed)
    values = [r.base, *changed, *r.rival_effects]
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        return [f"{r.effect}: every value must be a finite number, got {values}"]
    if r.expect not in ("up", "down"):
        problems.append(f"expect must be 'up' or 'down', got {r.expect!r}")
    if not changed or not r.rival_effects:
        problems.append(f"{r.effect}: a reason needs a change of its cause and of a rival")
    for x in changed:
        moved = x - r.base if r.expect == "up" else r.base - x
        if not moved > 0:
            problems.append(f"changing {r.cause}: {r.effect} went from {r.base:g} to {x:g}, "
                            f"not {r.expect}")
        elif moved < r.at_least:
            problems.append(f"changing {r.cause}: {r.effect} moved {moved:g}, less than the "
                            f"predicted {r.at_least:g}")
    for x in r.rival_effects:
        if not r.within.holds(r.base, x):
            problems.append(f"changing {r.rival} with the cause held: {r.effect} went from "
                            f"{r.base:g} to {x:g}, outside {r.within.name}")
    return problems


@dataclass(frozen=True, slots=True)
class Claim:
    lesson: str  # assets/lessons/<lesson>.md
    template: str  # a fragment of that lesson with {fields}
    check: Callable[[], Mapping[str, object] | Reason]
    is_reason: bool = False

    @property
    def name(self) -> str:
        return f"{self.lesson}:{self.check.__name__}"

    def evaluate(self) -> tuple[str, Reason | None]:
        """(the sentence with the computed fields, the reason's counterfactual or None)."""
        out = self.check()
        if self.is_reason != isinstance(out, Reason):
            raise TypeError(f"{self.name}: @reason returns a Reason, @claim a dict of fields")
        fields = out.fields if isinstance(out, Reason) else out
        sentence = " ".join(self.template.format(**fields).split())
        return sentence, out if isinstance(out, Reason) else None

    def sentence(self) -> str:
        return self.evaluate()[0]


CLAIMS: list[Claim] = []


def _register(lesson: str, template: str, is_reason: bool):
    def register(fn):
        CLAIMS.append(Claim(lesson, template, fn, is_reason))
        return fn
    return register


def claim(lesson: str, template: str) -> Callable[[Callable[[], Mapping[str, object]]],
                                                   Callable[[], Mapping[str, object]]]:
    """Register fn as the check behind `template` in `lesson`; fn returns the fields."""
    return _register(lesson, template, False)


def reason(lesson: str, template: str) -> Callable[[Callable[[], Reason]],
                                                    Callable[[], Reason]]:
    """Register fn as the counterfactual behind the causal sentence `template` in `lesson`."""
    return _register(lesson, template, True)


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


def template_span(template: str, text: str) -> tuple[int, int] | None:
    """Where a template's literal text matches in `text` (whitespace-normalised), each field
    matching any run of characters; fields at either end are left out. None: no match."""
    parts = [lit for lit, *_ in string.Formatter().parse(template)]
    literals = [" ".join(p.split()) for p in parts]
    while literals and not literals[0].strip():
        literals.pop(0)
    while literals and not literals[-1].strip():
        literals.pop()
    if not literals:
        return None
    pattern = ".+?".join(re.escape(p) for p in literals)
    m = re.search(pattern, text)
    return (m.start(), m.end()) if m else None
