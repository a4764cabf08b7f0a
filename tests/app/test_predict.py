"""The Predict card: every lesson's Predict paragraph or bullet (with its folded answer) moves
whole to the card above the figures, and the lesson column keeps everything else, once."""

from __future__ import annotations

import re

import pytest

from tabs.predict import PREDICT, split_predict
from tabs.registry import REGISTRY

pytestmark = pytest.mark.app


def _words(text: str) -> list[str]:
    return re.findall(r"\S+", text.replace("\n- ", "\n"))


@pytest.mark.parametrize("tab", REGISTRY, ids=[t.id for t in REGISTRY])
def test_every_lesson_has_one_predict_card_and_shows_it_once(tab):
    text = tab.lesson_path.read_text(encoding="utf-8")
    card, rest = split_predict(text)
    assert PREDICT.search(card), f"{tab.id}: no Predict card"
    notes = rest.find("<details><summary>Instructor notes")
    assert not PREDICT.search(rest[: notes if notes >= 0 else None]), (
        f"{tab.id}: a Predict prompt is still in the lesson column")
    assert "<summary>Answer</summary>" not in rest, f"{tab.id}: the answer stayed behind"
    if "<summary>Answer</summary>" in text:
        assert card.count("<details>") == card.count("</details>") == 1
    # Nothing reworded, nothing lost, nothing doubled: the words are the file's, split in two.
    assert sorted(_words(card) + _words(rest)) == sorted(_words(text))


def test_paragraph_bullet_and_answer_forms():
    para = "Intro.\n\n**Budgets.** A burst. **Predict, then double it:** who suffers?\n" \
           "<details><summary>Answer</summary>\n\nThe short class.\n\n</details>\n\nAfter.\n"
    card, rest = split_predict(para)
    assert card.startswith("**Budgets.**") and card.rstrip().endswith("</details>")
    assert rest == "Intro.\n\nAfter.\n"
    bullets = "- One.\n- **Move k.** Predict first: how many\n  blocks? More.\n- Three.\n"
    card, rest = split_predict(bullets)
    assert card == "**Move k.** Predict first: how many\nblocks? More.\n"
    assert rest == "- One.\n- Three.\n"
    assert split_predict("**Predictors.** recall.\n") == ("", "**Predictors.** recall.\n")


def test_a_predict_inside_the_instructor_notes_stays_there():
    text = "Lesson.\n\n<details><summary>Instructor notes</summary>\n\nPredict x.\n</details>\n"
    assert split_predict(text) == ("", text)
