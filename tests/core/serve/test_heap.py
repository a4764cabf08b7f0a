"""core/serve/heap.py: the glibc calls a class server makes, and what they refuse."""

from __future__ import annotations

import platform

import pytest

from core.serve.heap import give_back_heap, limit_arenas

GLIBC = platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc_trim and mallopt only")
def test_glibc_takes_both_calls():
    assert give_back_heap() is True
    assert limit_arenas(8) is True  # glibc's default on this machine's cores or fewer


@pytest.mark.parametrize("n", [0, -1, 1.5, True, "2"])
def test_a_bad_arena_count_is_refused_by_name(n):
    with pytest.raises(ValueError, match=r"n must be an int >= 1"):
        limit_arenas(n)
