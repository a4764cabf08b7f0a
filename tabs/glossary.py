"""The lab's one glossary (assets/lessons/glossary.md) and the [[term]] links lessons use.

A lesson writes a glossary term as `[[KDA]]`; the rendered lesson shows the term marked, and
its definition opens under it on a click or a tap, on keyboard focus (Tab) and on hover, in
the lesson's own text size (a projector shows it; a browser's title tooltip is small, late, and
never shows on a touch screen). Every tab also folds the whole glossary under its lesson. An
unknown term is an error at build time, never a silent plain word.
"""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path

GLOSSARY = Path(__file__).resolve().parent.parent / "assets" / "lessons" / "glossary.md"
TERM = re.compile(r"\[\[([^\]]+)\]\]")
ENTRY = re.compile(r"^\*\*(.+?)\*\*: (.+)$")


@functools.cache
def entries() -> dict[str, str]:
    """Term -> definition, in the glossary's order."""
    out: dict[str, str] = {}
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        if m := ENTRY.match(line.strip()):
            out[m.group(1)] = m.group(2)
    return out


def terms_used(text: str) -> list[str]:
    return TERM.findall(text)


def link_terms(text: str) -> str:
    """Replace each [[term]] by the term (focusable: assets/lab.css opens its definition)."""
    defs = entries()

    def one(m: re.Match[str]) -> str:
        term = m.group(1)
        if term not in defs:
            raise KeyError(f"glossary has no entry for [[{term}]]; add it to {GLOSSARY.name}")
        return (f'<span class="term" tabindex="0" role="button" aria-label="{html.escape(term)}'
                f': {html.escape(defs[term])}">{term}<span class="term-def" role="tooltip">'
                f"{html.escape(defs[term])}</span></span>")

    return TERM.sub(one, text)


def as_markdown() -> str:
    return "\n\n".join(f"**{t}**: {d}" for t, d in entries().items())
