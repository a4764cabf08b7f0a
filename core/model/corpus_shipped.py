"""The shipped corpus, assets/corpus: read it, checking sizes and sha256 first.

assets/corpus/
  corpus.jsonl.xz    one JSON object a line, {"domain", "source", "text"}, xz-compressed
  manifest.json      sha256 + size of the compressed file and of its text, per-domain counts,
                     the Python version it was extracted from, the extract command
  LICENSE-PSF.txt    the Python licence (the code and prose are the PSF's)
A missing or corrupt file raises CorpusAssetError naming the file and the command that
rebuilds it (`python -m core.model.corpus_extract`, which reads the running interpreter's
standard library: other Python versions give other text, hence the shipped copy).
"""

from __future__ import annotations

import functools
import hashlib
import json
import lzma
from pathlib import Path

from core.model.corpus_documents import DOMAINS, Document

CORPUS_DIR = Path(__file__).resolve().parents[2] / "assets" / "corpus"
CORPUS_FILE = "corpus.jsonl.xz"
MANIFEST = "manifest.json"
LICENCE = "LICENSE-PSF.txt"
EXTRACT = "python -m core.model.corpus_extract"


class CorpusAssetError(RuntimeError):
    """A shipped corpus file is missing, corrupt or inconsistent; the message says how to fix."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}. Restore it from git, or re-extract with "
                         f"`{EXTRACT}` (same text only on the Python version in the manifest).")
        self.path = path


def read_manifest(directory: Path = CORPUS_DIR) -> dict[str, object]:
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise CorpusAssetError(path, "manifest is missing")
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise CorpusAssetError(path, f"manifest is unreadable ({e})") from None


def parse(text: bytes, where: Path) -> tuple[Document, ...]:
    """Documents from JSON lines; every domain must be one of DOMAINS."""
    docs = []
    for i, line in enumerate(text.decode().splitlines()):
        d = json.loads(line)
        if d["domain"] not in DOMAINS:
            raise CorpusAssetError(where, f"line {i + 1}: unknown domain {d['domain']!r}")
        docs.append(Document(d["domain"], d["text"], d["source"]))
    return tuple(docs)


@functools.cache
def _read(directory: str) -> tuple[Document, ...]:
    manifest = read_manifest(Path(directory))
    path = Path(directory) / CORPUS_FILE
    if not path.is_file():
        raise CorpusAssetError(path, "corpus file is missing")
    raw = path.read_bytes()
    if len(raw) != manifest["bytes"]:
        raise CorpusAssetError(path, f"file is {len(raw)} B, manifest says {manifest['bytes']} B")
    if hashlib.sha256(raw).hexdigest() != manifest["sha256"]:
        raise CorpusAssetError(path, "sha256 differs from the manifest (corrupt file)")
    try:
        text = lzma.decompress(raw)
    except lzma.LZMAError as e:
        raise CorpusAssetError(path, f"not valid xz ({e})") from None
    if hashlib.sha256(text).hexdigest() != manifest["text_sha256"]:
        raise CorpusAssetError(path, "decompressed text's sha256 differs from the manifest")
    return parse(text, path)


def read_documents(directory: Path = CORPUS_DIR) -> tuple[Document, ...]:
    """Every shipped document, in file order (domain, then source); cached per directory."""
    return _read(str(Path(directory).resolve()))
