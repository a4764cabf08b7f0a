"""Chained block hashes: h_i = blake2b(h_{i-1} || block i), full blocks only.

A block's hash names its whole prefix, so equal hashes mean equal prefixes (up to a collision,
which the cache rules out by comparing the bytes on every hit). hashlib, never Python's salted
hash(): the same prompt hashes the same in every process.
"""

from __future__ import annotations

import hashlib

from core.errors import ParamError, check_int

DIGEST_BYTES = 16
ROOT = hashlib.blake2b(b"serving-lab/prefix/v1", digest_size=DIGEST_BYTES).digest()


def check_prompt(tokens: object) -> bytes:
    if not isinstance(tokens, bytes | bytearray):
        raise ParamError(f"tokens must be bytes, got {type(tokens).__name__}")
    return bytes(tokens)


def block_hashes(tokens: bytes, block: int, salt: bytes = b"") -> list[bytes]:
    """One digest per full block of `block` tokens; a trailing partial block has none."""
    tokens = check_prompt(tokens)
    block = check_int("block", block, 1, 1 << 20)
    h = hashlib.blake2b(ROOT + salt, digest_size=DIGEST_BYTES).digest() if salt else ROOT
    out = []
    for i in range(len(tokens) // block):
        h = hashlib.blake2b(h + tokens[i * block : (i + 1) * block], digest_size=DIGEST_BYTES
                            ).digest()
        out.append(h)
    return out
