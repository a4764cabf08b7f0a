"""The shipped corpus (assets/corpus): verified before use, licensed, small, per-domain counts.

Pinned: a flipped byte, a truncated file or a missing manifest raises CorpusAssetError naming
the file and the extract command; the manifest's per-domain counts match what is read; the
PSF licence ships beside the Python text; assets/ stays under 25 MB in all.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.model.corpus import DOMAINS
from core.model.corpus_shipped import (
    CORPUS_DIR,
    CORPUS_FILE,
    EXTRACT,
    LICENCE,
    MANIFEST,
    CorpusAssetError,
    read_documents,
    read_manifest,
)

ASSETS_BUDGET = 25_000_000
CORPUS_BUDGET = 3_000_000  # compressed


def _copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(CORPUS_DIR, tmp_path / "corpus"))


def test_manifest_matches_documents() -> None:
    """Document and byte counts per domain in the manifest are what read_documents returns."""
    docs = read_documents()
    per = read_manifest()["domains"]
    assert set(per) == set(DOMAINS)
    for dom in DOMAINS:
        mine = [d for d in docs if d.domain == dom]
        assert per[dom]["documents"] == len(mine) > 0
        assert per[dom]["bytes"] == sum(len(d.text.encode()) for d in mine)
    assert len({d.source for d in docs}) == len(docs), "sources are unique"


def test_real_text_per_domain() -> None:
    """Code is stdlib source, prose is pydoc topics, and both are most of the bytes."""
    docs = read_documents()
    code = [d for d in docs if d.domain == "code"]
    prose = [d for d in docs if d.domain == "prose"]
    assert all(d.source.endswith(".py") for d in code)
    assert all(d.source.startswith("pydoc_data/topics.py:") for d in prose)
    assert sum("def " in d.text for d in code) > 0.8 * len(code)
    real = sum(len(d.text) for d in code + prose)
    assert real > 0.8 * sum(len(d.text) for d in docs)


def test_licence_and_sizes() -> None:
    """The PSF licence ships; the corpus is a few MB at most; all of assets/ < 25 MB."""
    assert "PYTHON SOFTWARE FOUNDATION LICENSE" in (CORPUS_DIR / LICENCE).read_text()
    assert (CORPUS_DIR / CORPUS_FILE).stat().st_size <= CORPUS_BUDGET
    assets = CORPUS_DIR.parent
    total = sum(f.stat().st_size for f in assets.rglob("*") if f.is_file())
    assert total <= ASSETS_BUDGET, total


def test_corrupt_file(tmp_path: Path) -> None:
    """One flipped byte is caught by the sha256 check, naming the file and the command."""
    d = _copy(tmp_path)
    raw = bytearray((d / CORPUS_FILE).read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    (d / CORPUS_FILE).write_bytes(bytes(raw))
    with pytest.raises(CorpusAssetError, match=f"{CORPUS_FILE}.*sha256") as e:
        read_documents(d)
    assert EXTRACT in str(e.value)


def test_truncated_and_missing(tmp_path: Path) -> None:
    """A truncated file reports its size; a missing manifest or file says so."""
    d = _copy(tmp_path)
    p = d / CORPUS_FILE
    p.write_bytes(p.read_bytes()[:100])
    with pytest.raises(CorpusAssetError, match="is 100 B, manifest says"):
        read_documents(d)
    p.unlink()
    with pytest.raises(CorpusAssetError, match="corpus file is missing"):
        read_documents(d)
    (d / MANIFEST).unlink()
    with pytest.raises(CorpusAssetError, match="manifest is missing"):
        read_documents(tmp_path / "corpus")
