"""Every lesson claim against the engine; every number covered; every causal sentence a
tested reason; student voice; word budget; every Predict answered."""

from __future__ import annotations

import ast
import functools
import importlib
import re
from dataclasses import replace
from pathlib import Path

import pytest

from tabs.glossary import entries, terms_used
from tabs.predict import ANSWER, split_predict
from tabs.registry import REGISTRY
from tests.lessons.causal import NOT_CAUSAL, allowed, causal_sentences
from tests.lessons.registry import (
    CLAIMS,
    LESSONS,
    Claim,
    Reason,
    Within,
    judge,
    lesson_text,
    template_span,
    uncovered_numbers,
)

for _module in sorted(Path(__file__).parent.glob("claims_*.py")):
    importlib.import_module(f"tests.lessons.{_module.stem}")

LESSON_IDS = [t.id for t in REGISTRY]
READ = [*LESSON_IDS, "glossary"]  # every text a student reads: numbers must be claims
FOLD = "<details><summary>Instructor notes"
WORDS = (150, 250)  # words a student reads before the fold
FURTHER = re.compile(r"<details><summary>Going further.*?</details>", re.DOTALL)
FURTHER_WORDS = 200  # a folded "Going further" lesson
# Words about the lab's own history or implementation, not about the mechanism: its source
# documents and their projects, exception classes, compatibility modes, commands, its tests,
# the UI's jargon ("hero"), code identifiers (snake_case, calls). Anywhere in a lesson.
NOT_FOR_STUDENTS = re.compile(
    r"\bseed's\b|\bthe seed\b|\bupstream\b|\bcompat\b|\blease|\bnaive (?:design|write-up)\b|"
    r"\bwrite-up\b|kimi-k3-in-c|Model-Viz|\b\w+(?:Error|Exhausted|TooSmall|Busy)\b|OutOfPages|"
    r"python -m|\bpytest\b|\ba test\b|\bhero\b|\b[a-z]{2,}_[a-z_]{2,}\b|\w\(\)",
    re.IGNORECASE,
)
# Engine-computed verdicts a claim must not read: it compares the values itself.
VERDICTS = frozenset({
    "exact", "passed", "ok", "bit_exact", "no_split_head", "same_text", "complete",
    "aggregate_clamped", "aggregate_wrong", "claims_only_published", "within_cap",
    "chunked_within_tol", "history_exact", "next_exact", "only_removed_moved", "matches_ledger",
})


@functools.cache
def evaluated(c: Claim) -> tuple[str, Reason | None]:
    """The claim's sentence and reason, computed once per process: the number test, the reason
    test and the coverage test read the same computation."""
    return c.evaluate()


def sentence(c: Claim) -> str:
    return evaluated(c)[0]


def before_fold(lesson: str) -> str:
    return (LESSONS / f"{lesson}.md").read_text(encoding="utf-8").split(FOLD)[0]


@pytest.mark.parametrize("c", CLAIMS, ids=[c.name for c in CLAIMS])
def test_claim_holds(c) -> None:
    said, why = evaluated(c)
    assert said in lesson_text(c.lesson), (
        f"{c.name}: the engine says\n  {said!r}\nbut {c.lesson}.md does not contain it"
    )
    if why is not None:
        problems = judge(why)
        assert not problems, f"{c.name}: the reason does not hold:\n  " + "\n  ".join(problems)


def uncovered_reasons(lesson: str) -> list[str]:
    """Causal sentences of a lesson that no reason's template overlaps and the allow-list
    does not excuse. Reads the templates only: no claim is computed."""
    text = lesson_text(lesson)
    spans = [sp for c in CLAIMS if c.is_reason and c.lesson == lesson
             if (sp := template_span(c.template, text)) is not None]
    raw = (LESSONS / f"{lesson}.md").read_text(encoding="utf-8")
    return [s.text for s in causal_sentences(raw)
            if not allowed(lesson, s.text)
            and not any(a < s.start + len(s.text) and s.start < b for a, b in spans)]


@pytest.mark.parametrize("lesson", READ)
def test_every_reason_is_tested(lesson: str) -> None:
    """A sentence that says why is covered by a reason claim (a counterfactual), or is on the
    allow-list because its word states no cause."""
    left = uncovered_reasons(lesson)
    assert not left, (f"{lesson}.md gives {len(left)} reasons no counterfactual tests:\n  "
                      + "\n  ".join(left))


def test_allow_list_is_live() -> None:
    """Every allow-list entry excuses a causal sentence that is still in its lesson."""
    for lesson, entries_ in NOT_CAUSAL.items():
        sentences = [s.text for s in causal_sentences(
            (LESSONS / f"{lesson}.md").read_text(encoding="utf-8"))]
        for frag, why in entries_:
            assert why and any(frag in s for s in sentences), f"{lesson}: stale entry {frag!r}"


def test_judge_fails_wrong_reasons() -> None:
    """The reason test can fail: a wrong direction, a change too small, a rival that moves
    the effect, a missing change, and a non-number are each reported."""
    ok = Reason(effect="e", base=10.0, cause="c", changed=(20.0, 15.0), expect="up",
                at_least=4.0, rival="r", rival_effects=(10.5, 9.5), within=Within(name="t", abs=1))
    assert judge(ok) == []
    assert judge(replace(ok, expect="down"))
    assert judge(replace(ok, at_least=6.0))
    assert judge(replace(ok, rival_effects=(12.0,)))
    assert judge(replace(ok, rival_effects=()))
    assert judge(replace(ok, changed=(float("nan"),)))
    assert judge(replace(ok, changed=10.0))  # no change at all is not "up"


def test_claims_read_no_engine_verdicts() -> None:
    """No claim reads a verdict the engine computed about itself (an exact flag, a PASS)."""
    found = []
    for path in sorted(Path(__file__).parent.glob("claims_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in VERDICTS:
                found.append(f"{path.name}:{node.lineno} .{node.attr}")
            if isinstance(node, ast.Constant) and node.value == "PASS":
                found.append(f"{path.name}:{node.lineno} 'PASS'")
    assert not found, f"claims read engine verdicts: {found}"


@pytest.mark.parametrize("lesson", READ)
def test_every_number_is_a_claim(lesson: str) -> None:
    sentences = [sentence(c) for c in CLAIMS if c.lesson == lesson]
    left = uncovered_numbers(lesson_text(lesson), sentences)
    assert not left, f"{lesson}.md states numbers no claim computes: {left}"


def _words(text: str) -> int:
    return len(re.sub(r"<[^>]+>|\[\[|\]\]", " ", text).split())


@pytest.mark.parametrize("lesson", LESSON_IDS)
def test_word_budget(lesson: str) -> None:
    """Words a student reads before the fold, not counting a folded "Going further" lesson
    (read on demand; it has its own budget)."""
    n = _words(FURTHER.sub(" ", before_fold(lesson)))
    assert WORDS[0] <= n <= WORDS[1], f"{lesson}.md: {n} words before the fold, want {WORDS}"
    for deeper in FURTHER.findall(before_fold(lesson)):
        assert _words(deeper) <= FURTHER_WORDS, f"{lesson}.md: a Going further fold is too long"


@pytest.mark.parametrize("lesson", READ)
def test_written_for_students(lesson: str) -> None:
    text = re.sub(r"https?://\S+", " ", (LESSONS / f"{lesson}.md").read_text(encoding="utf-8"))
    hits = NOT_FOR_STUDENTS.findall(text.replace("d_k", " ").replace("d_v", " "))
    assert not hits, f"{lesson}.md talks about the lab, not the mechanism: {hits}"


@pytest.mark.parametrize("lesson", LESSON_IDS)
def test_every_predict_has_an_answer(lesson: str) -> None:
    card, _ = split_predict((LESSONS / f"{lesson}.md").read_text(encoding="utf-8"))
    assert card and ANSWER in card, f"{lesson}.md asks a Predict question with no answer"


@pytest.mark.parametrize("lesson", LESSON_IDS)
def test_glossary_terms_defined(lesson: str) -> None:
    text = (LESSONS / f"{lesson}.md").read_text(encoding="utf-8")
    missing = [t for t in terms_used(text) if t not in entries()]
    assert not missing, f"{lesson}.md links terms the glossary lacks: {missing}"


def test_lessons_link_the_glossary_terms_they_use() -> None:
    """A defined term written in plain text before the fold should be linked at least once."""
    for lesson in LESSON_IDS:
        text = before_fold(lesson)
        linked = set(terms_used(text))
        plain = re.sub(r"\[\[[^\]]+\]\]", " ", text)
        unlinked = [t for t in entries() if t not in linked
                    and re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", plain)]
        assert not unlinked, f"{lesson}.md uses glossary terms without [[...]]: {unlinked}"


def test_every_claim_names_a_lesson() -> None:
    assert {c.lesson for c in CLAIMS} <= set(READ)
