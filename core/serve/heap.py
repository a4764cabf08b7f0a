"""The process heap of a server that serves a room (glibc only; nothing on other C libraries).
Torch-free: the tabs layer calls it too.

  give_back_heap()    return the heap's free pages to the system (malloc_trim)
  limit_arenas(n)     at most n malloc arenas for threads created from now on (mallopt
                      M_ARENA_MAX); glibc's default is 8 per core
  fix_mmap_threshold(nbytes)
                      every allocation of nbytes or more gets pages of its own, given back
                      when freed (mallopt M_MMAP_THRESHOLD); glibc's default starts at 128 KiB
                      and rises to the largest block freed so far (up to 32 MiB)

Why: a burst of work on many threads (a room's requests, their pages' figures) leaves each
thread's malloc arena with tens of MiB that are free but still resident; glibc keeps them
until asked. Measured on the class server after 30 sessions: 771 -> 645 MiB. Called once, when the
server's last open streamed run has drawn its last figures (tabs/stream_draws.py).
A class server limits its arenas to 2 as it starts (core/experiments/serve.py serve_class):
its ~170 worker threads otherwise spread a room's short-lived objects over 16 arenas, each
left fragmented; `python -m tabs.load_bench --serve 30` measured memory after the room +155
-> +84..110 MiB with the same bytes a second. It also fixes the mmap threshold
(CLASS_MMAP_THRESHOLD there): with glibc's sliding threshold a room's large short-lived blocks
(activations, PNGs, JSON messages) come from the arenas once one such block has been freed, and
leave them fragmented; measured after one room of 30 (tests excluded, one process): +53 and +55
MiB resident, the arenas 50 MiB free and resident, against +39 and +40 MiB with the threshold
fixed at 64 or 256 KiB.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable


def _libc(name: str) -> Callable[..., int] | None:
    try:
        return getattr(ctypes.CDLL("libc.so.6"), name)
    except (OSError, AttributeError):
        return None


_TRIM = _libc("malloc_trim")
_MALLOPT = _libc("mallopt")
M_ARENA_MAX = -8  # glibc malloc.h
M_MMAP_THRESHOLD = -3


def give_back_heap() -> bool:
    """Trim every arena; True if the C library could (glibc), else False (nothing done)."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True


def limit_arenas(n: int) -> bool:
    """At most n (>= 1) arenas; True if the C library took it (glibc), else False."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an int >= 1, got {n!r}")
    return _MALLOPT is not None and _MALLOPT(M_ARENA_MAX, n) == 1


def fix_mmap_threshold(nbytes: int) -> bool:
    """Allocations of nbytes (>= 4096) or more mmapped and unmapped when freed, from now on;
    True if the C library took it (glibc), else False."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or not 4096 <= nbytes <= 32 << 20:
        raise ValueError(f"nbytes must be an int in [4096, {32 << 20}], got {nbytes!r}")
    return _MALLOPT is not None and _MALLOPT(M_MMAP_THRESHOLD, nbytes) == 1
