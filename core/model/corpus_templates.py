"""The templated domains: generated from built-in word lists and grammars (seeded, no I/O).

Four makers, one per domain, each returning one document's text:
  arithmetic  "37 + 85 = 122" lines (correct sums, products, differences)
  records     JSON-like records with a fixed key set and typed values
  code        Python-like lines (def / for / if / return over a small identifier set)
  prose       English-like sentences from a small built-in word list and grammar
`documents` is the whole templated corpus the model in assets/model was first trained on
(source "templates"); the shipped stdlib corpus (assets/corpus) keeps only the arithmetic and
records makers, next to real Python code and prose.
"""

from __future__ import annotations

import random

import numpy as np

from core.model.corpus_documents import DOMAINS, Corpus, Document

_NOUNS = ("cat dog model river city teacher student engine cache expert token garden "
          "window market letter number signal server table story").split()
_VERBS = ("sees finds builds reads moves holds counts keeps sends opens follows "
          "writes serves loads").split()
_ADJS = "small quick quiet bright old new warm cold busy lazy green heavy".split()
_ADVS = "slowly often never quickly always rarely".split()
_PREPS = "near under over behind beside into".split()
_NAMES = "alice bob carol dave erin frank grace heidi".split()
_CITIES = "paris tokyo lima oslo cairo delhi quito perth".split()
_IDENTS = "x y n i total count items value result buf key acc".split()
_FUNCS = "load step merge route count scan flush sort".split()


def _arithmetic(r: random.Random) -> str:
    lines = []
    for _ in range(r.randint(4, 9)):
        a, b = r.randint(0, 99), r.randint(0, 99)
        op = r.choice("+-*")
        val = a + b if op == "+" else a - b if op == "-" else a * b
        lines.append(f"{a} {op} {b} = {val}")
    return "\n".join(lines)


def _records(r: random.Random) -> str:
    out = []
    for _ in range(r.randint(2, 4)):
        rec = (f'{{"id": {r.randint(1, 9999)}, "name": "{r.choice(_NAMES)}", '
               f'"city": "{r.choice(_CITIES)}", "age": {r.randint(18, 90)}, '
               f'"active": {r.choice(["true", "false"])}, "score": {r.randint(0, 1000) / 10}}}')
        out.append(rec)
    return "\n".join(out)


def _code(r: random.Random) -> str:
    f, a, b = r.choice(_FUNCS), r.choice(_IDENTS), r.choice(_IDENTS)
    lines = [f"def {f}_{r.choice(_IDENTS)}({a}, {b}):"]
    for _ in range(r.randint(2, 5)):
        kind = r.randint(0, 3)
        x, y = r.choice(_IDENTS), r.choice(_IDENTS)
        if kind == 0:
            lines.append(f"    {x} = {y} + {r.randint(1, 9)}")
        elif kind == 1:
            lines += [f"    for {x} in range({r.randint(2, 64)}):", f"        {y} += {x}"]
        elif kind == 2:
            lines += [f"    if {x} > {y}:", f"        {x} = {y}"]
        else:
            lines.append(f"    {x} = {r.choice(_FUNCS)}({y})")
    lines.append(f"    return {r.choice(_IDENTS)}")
    return "\n".join(lines)


def _sentence(r: random.Random) -> str:
    subj = f"the {r.choice(_ADJS)} {r.choice(_NOUNS)}" if r.random() < 0.6 else r.choice(_NAMES)
    obj = f"the {r.choice(_NOUNS)}"
    s = f"{subj} {r.choice(_VERBS)} {obj}"
    if r.random() < 0.5:
        s += f" {r.choice(_PREPS)} the {r.choice(_NOUNS)}"
    if r.random() < 0.3:
        s += f" {r.choice(_ADVS)}"
    return s[0].upper() + s[1:] + "."


def _prose(r: random.Random) -> str:
    return " ".join(_sentence(r) for _ in range(r.randint(3, 6)))


MAKERS = {"arithmetic": _arithmetic, "records": _records, "code": _code, "prose": _prose}


def documents(n_docs: int = 12_000, seed: int = 0) -> list[Document]:
    """n_docs documents, domains in a seeded shuffled order; same seed, same bytes."""
    r = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        dom = r.choice(DOMAINS)
        docs.append(Document(dom, MAKERS[dom](r)))
    return docs


def _join(docs: list[Document]) -> tuple[np.ndarray, np.ndarray]:
    data, dom = [], []
    for d in docs:
        b = (d.text + "\n\n").encode()
        data.append(np.frombuffer(b, np.uint8))
        dom.append(np.full(len(b), DOMAINS.index(d.domain), np.uint8))
    return np.concatenate(data), np.concatenate(dom)


def templated_corpus(n_docs: int = 12_000, seed: int = 0, heldout_every: int = 20) -> Corpus:
    """About 2 MB of training bytes; every heldout_every-th document held out (source
    "templates": the corpus assets/model was trained on before issue 9)."""
    docs = documents(n_docs, seed)
    tr, trd = _join([d for i, d in enumerate(docs) if i % heldout_every])
    he, hed = _join([d for i, d in enumerate(docs) if not i % heldout_every])
    return Corpus(tr, he, trd, hed)
