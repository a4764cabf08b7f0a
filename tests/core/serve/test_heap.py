"""core/serve/heap.py: the glibc calls a class server makes, and what they refuse."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from core.serve.heap import fix_mmap_threshold, give_back_heap, limit_arenas

GLIBC = platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc_trim and mallopt only")
def test_glibc_takes_both_calls():
    assert give_back_heap() is True
    assert limit_arenas(8) is True  # glibc's default on this machine's cores or fewer


@pytest.mark.parametrize("n", [0, -1, 1.5, True, "2"])
def test_a_bad_arena_count_is_refused_by_name(n):
    with pytest.raises(ValueError, match=r"n must be an int >= 1"):
        limit_arenas(n)


# A 1 MiB block freed raises glibc's sliding threshold past 512 KiB; a 512 KiB block then comes
# from the arena (0 bytes mmapped) unless the threshold was fixed below it.
_MMAPPED_AFTER = """
import ctypes, sys
from core.serve.heap import fix_mmap_threshold
class MI(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena ordblks smblks hblks hblkhd usmblks "
                                                "fsmblks uordblks fordblks keepcost").split()]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype, libc.malloc.restype = MI, ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
if sys.argv[1] == "fixed":
    fix_mmap_threshold(256 << 10)
libc.free(libc.malloc(1 << 20))
before = libc.mallinfo2().hblkhd
p = libc.malloc(512 << 10)
print(libc.mallinfo2().hblkhd - before)
libc.free(p)
"""


@pytest.mark.skipif(not GLIBC, reason="glibc's mallopt only")
def test_a_fixed_threshold_keeps_large_blocks_out_of_the_arenas():
    def mmapped(mode: str) -> int:
        out = subprocess.run([sys.executable, "-c", _MMAPPED_AFTER, mode], capture_output=True,
                             text=True, check=True)
        return int(out.stdout.split()[-1])

    assert mmapped("sliding") == 0
    assert mmapped("fixed") >= 512 << 10


@pytest.mark.parametrize("n", [0, 4095, (32 << 20) + 1, 1.5, True, "65536"])
def test_a_bad_threshold_is_refused_by_name(n):
    with pytest.raises(ValueError, match=r"nbytes must be an int in \[4096, "):
        fix_mmap_threshold(n)
