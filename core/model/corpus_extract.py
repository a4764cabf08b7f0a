"""`python -m core.model.corpus_extract`: write assets/corpus from this interpreter, once.

What goes in (fixed rules, no randomness but seeded generators, so one Python version always
gives the same bytes):
  code        standard-library .py files (tests, codec tables, bundled data and vendored
              packages excluded, at least MIN_CODE_CHARS long), in sha256(path) order until
              CODE_CHARS; each cut to CODE_FILE_CHARS at the last top-level blank line
  prose       every pydoc_data topic (the interpreter's bundled language-reference text)
  records     generated JSON-like records (corpus_templates), seed 1, RECORDS_CHARS
  arithmetic  generated "a op b = c" sheets (corpus_templates), seed 2, ARITHMETIC_CHARS
The Python text is the PSF's: its LICENSE.txt is copied next to it. Training and tests read
the shipped copy (core/model/corpus_shipped.py), never this interpreter's files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import os
import platform
import random
import re
import sys
import sysconfig
from pathlib import Path

from core.errors import check_int
from core.model.corpus_documents import DOMAINS, Document
from core.model.corpus_shipped import CORPUS_DIR, CORPUS_FILE, EXTRACT, LICENCE, MANIFEST
from core.model.corpus_templates import MAKERS

CODE_CHARS = 2_900_000
CODE_FILE_CHARS = 16_000
MIN_CODE_CHARS = 1_000
RECORDS_CHARS = 250_000
ARITHMETIC_CHARS = 200_000
SEEDS = {"records": 1, "arithmetic": 2}
# Path parts never read: tests, vendored and generated files, bundled data, build config.
EXCLUDED_PARTS = frozenset({"test", "tests", "idle_test", "site-packages", "__pycache__",
                            "encodings", "pydoc_data", "ensurepip"})


def stdlib_dir() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def code_files(root: Path) -> list[Path]:
    """Candidate .py files under root, relative, sorted by sha256 of their posix path."""
    keep = []
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in EXCLUDED_PARTS and not d.startswith("config-")]
        rel = Path(here).relative_to(root)
        keep += [rel / f for f in files if f.endswith(".py") and not f.startswith("_sysconfigdata")]
    return sorted(keep, key=lambda p: hashlib.sha256(p.as_posix().encode()).hexdigest())


def clip(text: str, cap: int) -> str:
    """text if it fits in cap, else cut before the last top-level line after a blank line."""
    if len(text) <= cap:
        return text
    cuts = [m.start() + 1 for m in re.finditer(r"\n\n(?=\S)", text[:cap])]
    cut = cuts[-1] if cuts and cuts[-1] >= cap // 2 else text.rfind("\n", 0, cap) + 1
    return text[:cut]


def normalise(text: str) -> str:
    """Unix newlines, no trailing blank lines, one final newline."""
    return text.replace("\r\n", "\n").replace("\r", "\n").rstrip() + "\n"


def code_documents(root: Path, budget: int) -> list[Document]:
    docs, total = [], 0
    for rel in code_files(root):
        if total >= budget:
            break
        try:
            text = normalise((root / rel).read_bytes().decode("utf-8"))
        except UnicodeDecodeError:
            continue
        if len(text) < MIN_CODE_CHARS:
            continue
        text = clip(text, min(CODE_FILE_CHARS, budget - total + MIN_CODE_CHARS))
        docs.append(Document("code", text, rel.as_posix()))
        total += len(text)
    return docs


def prose_documents() -> list[Document]:
    from pydoc_data.topics import topics

    return [Document("prose", normalise(topics[k]), f"pydoc_data/topics.py:{k}")
            for k in sorted(topics)]


def generated_documents(domain: str, budget: int) -> list[Document]:
    r = random.Random(SEEDS[domain])
    docs, total = [], 0
    while total < budget:
        text = normalise(MAKERS[domain](r))
        docs.append(Document(domain, text, f"generated/{domain}/{len(docs):05d}"))
        total += len(text)
    return docs


def collect(root: Path, code_chars: int = CODE_CHARS, records_chars: int = RECORDS_CHARS,
            arithmetic_chars: int = ARITHMETIC_CHARS) -> list[Document]:
    """Every document, in DOMAINS order, then by source."""
    docs = (generated_documents("arithmetic", check_int("arithmetic_chars", arithmetic_chars, 1))
            + generated_documents("records", check_int("records_chars", records_chars, 1))
            + code_documents(root, check_int("code_chars", code_chars, 1)) + prose_documents())
    return sorted(docs, key=lambda d: (DOMAINS.index(d.domain), d.source))


def serialise(docs: list[Document]) -> bytes:
    """One JSON object a line, keys sorted, UTF-8 (the text the manifest's text_sha256 covers)."""
    lines = [json.dumps({"domain": d.domain, "source": d.source, "text": d.text},
                        ensure_ascii=False, sort_keys=True) for d in docs]
    return ("\n".join(lines) + "\n").encode()


def write(docs: list[Document], out: Path, root: Path) -> dict[str, object]:
    """corpus.jsonl.xz + manifest.json + the licence into out; returns the manifest."""
    out.mkdir(parents=True, exist_ok=True)
    text = serialise(docs)
    raw = lzma.compress(text, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64,
                        preset=9 | lzma.PRESET_EXTREME)
    (out / CORPUS_FILE).write_bytes(raw)
    (out / LICENCE).write_bytes((root / "LICENSE.txt").read_bytes())
    per = {dom: {"documents": sum(d.domain == dom for d in docs),
                 "bytes": sum(len(d.text.encode()) for d in docs if d.domain == dom)}
           for dom in DOMAINS}
    manifest = {
        "file": CORPUS_FILE, "bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest(),
        "text_bytes": len(text), "text_sha256": hashlib.sha256(text).hexdigest(),
        "python": platform.python_version(), "extract": EXTRACT, "licence": LICENCE,
        "domains": per,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=EXTRACT, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=CORPUS_DIR)
    a = p.parse_args(argv)
    root = stdlib_dir()
    m = write(collect(root), a.out, root)
    for dom, c in m["domains"].items():
        print(f"{dom:>10}: {c['documents']:5d} documents, {c['bytes']:>9,} B")
    print(f"wrote {a.out / CORPUS_FILE}: {m['bytes']:,} B compressed, {m['text_bytes']:,} B "
          f"of JSON lines, Python {m['python']}, sha256 {m['sha256'][:16]}...")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
