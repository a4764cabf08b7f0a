"""Every lesson claim against the engine; every number covered; student voice; word budget."""

from __future__ import annotations

import functools
import importlib
import re
from pathlib import Path

import pytest

from tabs.glossary import entries, terms_used
from tabs.registry import REGISTRY
from tests.lessons.registry import CLAIMS, LESSONS, Claim, lesson_text, uncovered_numbers

for _module in sorted(Path(__file__).parent.glob("claims_*.py")):
    importlib.import_module(f"tests.lessons.{_module.stem}")

LESSON_IDS = [t.id for t in REGISTRY]
READ = [*LESSON_IDS, "glossary"]  # every text a student reads: numbers must be claims
FOLD = "<details><summary>Instructor notes"
WORDS = (150, 250)  # words a student reads before the fold
# Words about the lab's own history or implementation, not about the mechanism.
NOT_FOR_STUDENTS = re.compile(
    r"\bseed's\b|\bthe seed\b|\bupstream\b|\bcompat\b|ParamError|SlotsExhausted|\blease",
    re.IGNORECASE,
)


@functools.cache
def sentence(c: Claim) -> str:
    """The claim's sentence, computed once per process: the number test and the coverage test
    read the same computation."""
    return c.sentence()


def before_fold(lesson: str) -> str:
    return (LESSONS / f"{lesson}.md").read_text(encoding="utf-8").split(FOLD)[0]


@pytest.mark.parametrize("c", CLAIMS, ids=[c.name for c in CLAIMS])
def test_claim_holds(c) -> None:
    said = sentence(c)
    assert said in lesson_text(c.lesson), (
        f"{c.name}: the engine says\n  {said!r}\nbut {c.lesson}.md does not contain it"
    )


@pytest.mark.parametrize("lesson", READ)
def test_every_number_is_a_claim(lesson: str) -> None:
    sentences = [sentence(c) for c in CLAIMS if c.lesson == lesson]
    left = uncovered_numbers(lesson_text(lesson), sentences)
    assert not left, f"{lesson}.md states numbers no claim computes: {left}"


@pytest.mark.parametrize("lesson", LESSON_IDS)
def test_word_budget(lesson: str) -> None:
    n = len(re.sub(r"<[^>]+>|\[\[|\]\]", " ", before_fold(lesson)).split())
    assert WORDS[0] <= n <= WORDS[1], f"{lesson}.md: {n} words before the fold, want {WORDS}"


@pytest.mark.parametrize("lesson", LESSON_IDS)
def test_written_for_students(lesson: str) -> None:
    hits = NOT_FOR_STUDENTS.findall(before_fold(lesson))
    assert not hits, f"{lesson}.md talks about the lab, not the mechanism: {hits}"


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
