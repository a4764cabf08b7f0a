"""Extraction (`python -m core.model.corpus_extract`): fixed rules, the same bytes every time.

Pinned: two extractions give identical files; excluded paths (tests, codec tables, vendored
packages) never appear; long files are cut at a top-level boundary; on the Python version the
shipped copy came from, extracting again reproduces its text sha256 exactly (other versions
have other stdlib text, which is why the corpus ships).
"""

from __future__ import annotations

import hashlib
import platform
from pathlib import Path

import pytest

from core.errors import ParamError
from core.model.corpus_extract import (
    EXCLUDED_PARTS,
    clip,
    code_files,
    collect,
    serialise,
    stdlib_dir,
    write,
)
from core.model.corpus_shipped import CORPUS_FILE, read_documents, read_manifest

SMALL = {"code_chars": 40_000, "records_chars": 3_000, "arithmetic_chars": 2_000}


def test_two_extractions_identical(tmp_path: Path) -> None:
    """A small extraction twice: byte-identical files and manifests, and readable."""
    root = stdlib_dir()
    for name in ("a", "b"):
        write(collect(root, **SMALL), tmp_path / name, root)
    for f in ("corpus.jsonl.xz", "manifest.json", "LICENSE-PSF.txt"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
    docs = read_documents(tmp_path / "a")
    assert {d.domain for d in docs} == {"arithmetic", "records", "code", "prose"}


def test_rules() -> None:
    """No excluded path is a candidate; the order is by sha256 of the path, not by name."""
    files = code_files(stdlib_dir())
    assert files and not any(EXCLUDED_PARTS & set(p.parts[:-1]) for p in files)
    assert not any(p.name.startswith("_sysconfigdata") for p in files)
    assert files != sorted(files)
    with pytest.raises(ParamError, match="code_chars"):
        collect(stdlib_dir(), code_chars=0)


def test_clip_cuts_at_top_level() -> None:
    """A long file is cut before a top-level statement that follows a blank line."""
    text = "import os\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n"
    assert clip(text, 1000) == text
    assert clip(text, 40) == "import os\n\n\ndef a():\n    return 1\n\n"
    assert clip("x = 1\n" * 10, 15) == "x = 1\nx = 1\n"


def test_reproduces_shipped_text_on_its_python() -> None:
    """On the manifest's Python version, collect() gives the shipped text, byte for byte."""
    manifest = read_manifest()
    if platform.python_version() != manifest["python"]:
        pytest.skip(f"stdlib text differs across versions: shipped from Python "
                    f"{manifest['python']}, running {platform.python_version()}")
    text = serialise(collect(stdlib_dir()))
    assert hashlib.sha256(text).hexdigest() == manifest["text_sha256"]
    assert manifest["file"] == CORPUS_FILE
