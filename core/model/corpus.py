"""A deterministic multi-domain byte corpus, generated here (nothing shipped, nothing downloaded).

Four domains, so experts can specialise and routing has visible structure:
  arithmetic  "37 + 85 = 122" lines (correct sums, products, differences)
  records     JSON-like records with a fixed key set and typed values
  code        Python-like lines (def / for / if / return over a small identifier set)
  prose       English-like sentences from a small built-in word list and grammar
Each document carries its domain label. Documents are separated by a blank line. The split
is by document: every `heldout_every`-th document is held out.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np

DOMAINS = ("arithmetic", "records", "code", "prose")

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


@dataclass(frozen=True, slots=True)
class Document:
    domain: str
    text: str


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


_MAKERS = {"arithmetic": _arithmetic, "records": _records, "code": _code, "prose": _prose}


def documents(n_docs: int = 12_000, seed: int = 0) -> list[Document]:
    """n_docs documents, domains in a seeded shuffled order; same seed, same bytes."""
    r = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        dom = r.choice(DOMAINS)
        docs.append(Document(dom, _MAKERS[dom](r)))
    return docs


@dataclass(frozen=True, slots=True)
class Corpus:
    train: np.ndarray  # (n,) uint8
    heldout: np.ndarray  # (m,) uint8
    train_domains: np.ndarray  # (n,) uint8: DOMAINS index of each byte
    heldout_domains: np.ndarray


def _join(docs: list[Document]) -> tuple[np.ndarray, np.ndarray]:
    data, dom = [], []
    for d in docs:
        b = (d.text + "\n\n").encode()
        data.append(np.frombuffer(b, np.uint8))
        dom.append(np.full(len(b), DOMAINS.index(d.domain), np.uint8))
    return np.concatenate(data), np.concatenate(dom)


def build_corpus(n_docs: int = 12_000, seed: int = 0, heldout_every: int = 20) -> Corpus:
    """About 2.5 MB of training bytes and 1/20 of the documents held out."""
    docs = documents(n_docs, seed)
    train = [d for i, d in enumerate(docs) if i % heldout_every]
    held = [d for i, d in enumerate(docs) if not i % heldout_every]
    tr, trd = _join(train)
    he, hed = _join(held)
    return Corpus(tr, he, trd, hed)


def unigram_bpb(train: np.ndarray, heldout: np.ndarray) -> float:
    """Held-out bits per byte of an add-one unigram model fit on train."""
    counts = np.bincount(train, minlength=256).astype(np.float64) + 1.0
    logp = np.log2(counts / counts.sum())
    return float(-logp[heldout].mean())


def bigram_bpb(train: np.ndarray, heldout: np.ndarray, alpha: float = 0.01) -> float:
    """Held-out bits per byte of an add-alpha bigram model fit on train (first byte: unigram)."""
    c = np.zeros((256, 256), np.float64)
    np.add.at(c, (train[:-1], train[1:]), 1.0)
    p = (c + alpha) / (c + alpha).sum(1, keepdims=True)
    uni = np.bincount(train, minlength=256).astype(np.float64) + 1.0
    bits = -np.log2(p[heldout[:-1], heldout[1:]]).sum() - math.log2(uni[heldout[0]] / uni.sum())
    return float(bits / len(heldout))
