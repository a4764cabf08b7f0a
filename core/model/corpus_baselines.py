"""Baselines for held-out bits per byte: add-one unigram, add-alpha bigram (both fit on the
training bytes) and zlib (level 9 over the held-out bytes alone, no training data).

`*_bits` give the cost of every held-out position, so the model and the n-gram baselines can
be averaged over exactly the same positions (per domain too); `*_bpb` are the plain means.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

from core.errors import ParamError


def _check(name: str, x: np.ndarray, min_len: int = 1) -> np.ndarray:
    if not isinstance(x, np.ndarray) or x.dtype != np.uint8 or x.ndim != 1 or len(x) < min_len:
        raise ParamError(f"{name} must be a 1-D uint8 array of at least {min_len} bytes")
    return x


def _pair_counts(train: np.ndarray) -> np.ndarray:
    """[256, 256] float64: how often byte b follows byte a in train."""
    pairs = train[:-1].astype(np.int64) * 256 + train[1:]
    return np.bincount(pairs, minlength=256 * 256).reshape(256, 256).astype(np.float64)


def unigram_bits(train: np.ndarray, heldout: np.ndarray) -> np.ndarray:
    """(m,) float64: -log2 p(byte) of each held-out byte under an add-one unigram fit on train."""
    counts = np.bincount(_check("train", train), minlength=256).astype(np.float64) + 1.0
    return -np.log2(counts / counts.sum())[_check("heldout", heldout, 0)]


def bigram_bits(train: np.ndarray, heldout: np.ndarray, alpha: float = 0.01) -> np.ndarray:
    """(m,) float64: add-alpha bigram cost of each held-out byte given the previous one (the
    first byte costs its unigram bits)."""
    c = _pair_counts(_check("train", train, 2))
    logp = np.log2((c + alpha) / (c + alpha).sum(1, keepdims=True))  # [prev, next]
    out = unigram_bits(train, heldout)
    out[1:] = -logp[heldout[:-1], heldout[1:]]
    return out


def unigram_bpb(train: np.ndarray, heldout: np.ndarray) -> float:
    """Held-out bits per byte of an add-one unigram model fit on train."""
    counts = np.bincount(train, minlength=256).astype(np.float64) + 1.0
    logp = np.log2(counts / counts.sum())
    return float(-logp[heldout].mean())


def bigram_bpb(train: np.ndarray, heldout: np.ndarray, alpha: float = 0.01) -> float:
    """Held-out bits per byte of an add-alpha bigram model fit on train (first byte: unigram)."""
    c = _pair_counts(train)
    p = (c + alpha) / (c + alpha).sum(1, keepdims=True)
    uni = np.bincount(train, minlength=256).astype(np.float64) + 1.0
    bits = -np.log2(p[heldout[:-1], heldout[1:]]).sum() - math.log2(uni[heldout[0]] / uni.sum())
    return float(bits / len(heldout))


def zlib_bpb(data: np.ndarray) -> float:
    """8 x len(zlib.compress(data, level 9)) / len(data): a general-purpose compressor that
    sees only these bytes (its window is 32 KB), container header and checksum included."""
    data = _check("data", data)
    return 8.0 * len(zlib.compress(data.tobytes(), 9)) / len(data)
