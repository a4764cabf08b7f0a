"""The lesson's "Predict" prompt, lifted out of the lesson text into a card above the figures.

A lesson asks one Predict question, as its own paragraph ("**Predict, then move γ:** ..."),
inside a paragraph ("**Budgets.** ... **Predict, then double ...**") or inside a bullet ("Predict
first: ..."), optionally followed by its folded `<details><summary>Answer</summary>`. The card
takes the whole paragraph or bullet (never a reworded part of it) and the answer; the lesson
keeps everything else, so nothing is shown twice and every lesson file stays as written.
"""

from __future__ import annotations

import re

PREDICT = re.compile(r"\bPredict\b")  # not "Predictors"
FOLD = "<details><summary>Instructor notes"
ANSWER = "<details><summary>Answer</summary>"


def _unit(lines: list[str], i: int) -> tuple[int, int, bool]:
    """[start, end) of the paragraph or bullet holding line i, and whether it is a bullet."""
    start = i
    while start > 0 and not lines[start].startswith("- ") and lines[start - 1].strip() \
            and not lines[start - 1].startswith("<"):
        start -= 1
    bullet = lines[start].startswith("- ")
    end = i + 1
    while end < len(lines) and lines[end].strip() and not lines[end].startswith(("- ", "<")):
        end += 1
    return start, end, bullet


def _answer_end(lines: list[str], end: int) -> int | None:
    """End of an Answer fold starting right after line end (blank lines allowed between)."""
    k = end
    while k < len(lines) and not lines[k].strip():
        k += 1
    if k == len(lines) or not lines[k].startswith(ANSWER):
        return None
    while k < len(lines) and "</details>" not in lines[k]:
        k += 1
    return k + 1 if k < len(lines) else None


def split_predict(text: str) -> tuple[str, str]:
    """(card, rest): the Predict paragraph or bullet with its Answer fold, and the lesson
    without them. card is "" when the lesson (above its instructor notes) asks nothing."""
    lines = text.split("\n")
    fold = next((n for n, s in enumerate(lines) if s.startswith(FOLD)), len(lines))
    hit = next((n for n in range(fold) if PREDICT.search(lines[n])), None)
    if hit is None:
        return "", text
    start, end, bullet = _unit(lines, hit)
    card = lines[start:end]
    if bullet:  # a bullet becomes a paragraph: drop its marker and continuation indent
        card = [card[0][2:], *(s[2:] if s.startswith("  ") else s for s in card[1:])]
    answer_end = _answer_end(lines, end)
    if answer_end is not None:
        card += ["", *lines[end:answer_end]]
        end = answer_end
    rest = lines[:start] + lines[end:]
    return _tidy("\n".join(card)).strip() + "\n", _tidy("\n".join(rest))


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text)
