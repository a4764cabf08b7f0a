"""Chained block hashes: full blocks only, a hash names its prefix, stable across processes."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from core.errors import ParamError
from core.prefix.hashing import DIGEST_BYTES, ROOT, block_hashes
from tests.conftest import REPO


def test_by_hand_and_full_blocks_only():
    h = block_hashes(b"abcdefg", 3)  # two full blocks; "g" has no hash
    h1 = hashlib.blake2b(ROOT + b"abc", digest_size=DIGEST_BYTES).digest()
    assert h == [h1, hashlib.blake2b(h1 + b"def", digest_size=DIGEST_BYTES).digest()]


def test_a_block_hash_depends_on_its_whole_prefix():
    assert block_hashes(b"xxxdef", 3)[1] != block_hashes(b"abcdef", 3)[1]
    assert block_hashes(b"abcdef", 3, salt=b"tenant") != block_hashes(b"abcdef", 3)


def test_identical_in_another_process_with_another_hash_seed():
    code = "from core.prefix.hashing import block_hashes; print(block_hashes(b'hello world!', 4))"
    env = {"PYTHONHASHSEED": "123", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, check=True,
                         capture_output=True, text=True, timeout=60).stdout.strip()
    assert out == repr(block_hashes(b"hello world!", 4))


@pytest.mark.parametrize(("args", "name"), [(("text", 4), "tokens"), ((b"ab", 0), "block")])
def test_bad_input(args, name):
    with pytest.raises(ParamError, match=name):
        block_hashes(*args)
