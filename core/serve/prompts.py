"""The three kinds of prompt speculative decoding is measured on, one definition for the lab.

PROMPTS   cut from the shipped corpus's HELD-OUT documents (text the model never trained on, in
          the domains it did): from a named document, the bytes after an anchor, at most
          MAX_PROMPT of them, ending at a line break:
            code     xml/sax/xmlreader.py: getters and setters that repeat one shape
            records  generated/records/00654: one JSON object a line
            prose    the pydoc topic on the debugger: English technical prose
prompt(kind)  the bytes of one kind (ParamError naming `kind` for any other).
held_out(n)   n distinct prompts of mixed lengths cut from the held-out documents (the
              batching benchmark's and tab's requests): the domains in turn (code, prose,
              records), the next held-out document of that domain (in source order), from a
              line start picked by sha256, at most LENGTHS[i % 8] bytes, so a batch mixes
              domains and lengths.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

from core.errors import ParamError, check_choice, check_int
from core.model.corpus_documents import split_documents
from core.model.corpus_shipped import read_documents

MAX_PROMPT = 192  # prompt + n_new stays within the model's 256-byte training context


@dataclass(frozen=True, slots=True)
class PromptSource:
    kind: str
    source: str  # a held-out document of the shipped corpus
    anchor: str  # the prompt starts here


PROMPTS = (
    PromptSource("code", "xml/sax/xmlreader.py", "    def getDTDHandler(self):"),
    PromptSource("records", "generated/records/00654", '{"id": 1821,'),
    PromptSource("prose", "pydoc_data/topics.py:debugger", 'The module "pdb" defines'),
)
KINDS = tuple(p.kind for p in PROMPTS)


@functools.cache
def prompt(kind: str) -> bytes:
    """The prompt of one kind: at most MAX_PROMPT bytes of held-out text after its anchor, up
    to and including the last line break."""
    src = PROMPTS[KINDS.index(check_choice("kind", kind, KINDS))]
    _, held = split_documents(list(read_documents()))
    doc = next((d for d in held if d.source == src.source), None)
    if doc is None:
        raise ParamError(f"{src.source} is not a held-out document of the shipped corpus")
    text = doc.text.encode()
    at = text.find(src.anchor.encode())
    if at < 0:
        raise ParamError(f"{src.source} does not contain {src.anchor!r}")
    window = text[at : at + MAX_PROMPT]
    return window[: window.rfind(b"\n") + 1]


LENGTHS = (24, 160, 48, 192, 72, 120, 16, 96)  # bytes; each + 64 new stays in the context


@functools.cache
def held_out(n: int) -> tuple[bytes, ...]:
    """n distinct held-out prompts (module docstring), n in [1, 256]."""
    n = check_int("n", n, 1, 256)
    _, held = split_documents(list(read_documents()))
    by_domain: dict[str, list[bytes]] = {}
    for d in sorted(held, key=lambda d: d.source):
        by_domain.setdefault(d.domain, []).append(d.text.encode())
    domains = sorted(by_domain)
    out: list[bytes] = []
    i = 0
    while len(out) < n:
        docs = by_domain[domains[i % len(domains)]]
        text = docs[(i // len(domains)) % len(docs)]
        starts = [0] + [j + 1 for j in range(len(text) - 1) if text[j] == 10]
        pick = int.from_bytes(hashlib.sha256(f"held_out {i}".encode()).digest()[:8], "big")
        at = starts[pick % len(starts)]
        cut = text[at : at + LENGTHS[len(out) % len(LENGTHS)]]
        if cut.strip() and cut not in out:
            out.append(cut)
        i += 1
    return tuple(out)
