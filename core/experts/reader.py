"""Reads of one expert into its slot: the aligned-window plan, chunking, and the checks.

A contiguous expert is read as its 4096-aligned window `[floor(lo), ceil(hi))`, so the payload
lands at `pad = lo - floor(lo)` inside the slot; `slot_stride` is the one place the slot size
follows from that rule. The same layout is used with O_DIRECT and with
buffered reads, so slot layout and device-byte accounting do not depend on the filesystem.
Completeness is checked per piece: every chunk must be whole, except a last chunk cut at EOF
that still covers `pad + nbytes`.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from core.errors import check_int
from core.experts.layout import ExpertRef
from core.experts.shards import ShardIndex

PAGE = 4096
MAX_PIECES = 512  # work items per batch; the guard upstream added after a 64 x 17 chunk crash


def round_up(n: int, m: int) -> int:
    return -(-n // m) * m


def slot_stride(payload_bytes: int) -> int:
    """Bytes per arena slot for experts of `payload_bytes`: upstream's
    `round_up(payload + 2 x 4096, 4096)`.

    An aligned window adds up to a page each side of the payload, and a page-multiple stride
    keeps every slot (not only slot 0) a valid O_DIRECT destination.
    """
    return round_up(check_int("payload_bytes", payload_bytes, 1) + 2 * PAGE, PAGE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Piece:
    """One read: `length` bytes from `file_off` to slot offset `slot_off`; `need` must arrive."""

    file_off: int
    slot_off: int
    length: int
    need: int
    aligned: bool


@dataclass(frozen=True, slots=True)
class ReadPlan:
    shard: int
    pad: int  # payload start inside the slot
    footprint: int  # slot bytes the plan writes
    pieces: tuple[Piece, ...]

    @property
    def need_end(self) -> int:
        return max(p.slot_off + p.need for p in self.pieces)


def plan_reads(ref: ExpertRef, chunk_bytes: int | None = None, max_pieces: int = 0) -> ReadPlan:
    """Plan the reads of `ref`; `chunk_bytes` (a 4096 multiple) splits the window."""
    if not ref.contiguous:
        pieces = tuple(
            Piece(file_off=t.offset, slot_off=o, length=t.nbytes, need=t.nbytes, aligned=False)
            for t, o in zip(ref.tensors, ref.payload_offsets, strict=True)
        )
        return ReadPlan(ref.shard, 0, ref.nbytes, pieces)
    lo = ref.lo // PAGE * PAGE
    hi = round_up(ref.hi, PAGE)
    pad, window = ref.lo - lo, hi - lo
    need_end = pad + ref.nbytes
    chunk = window if chunk_bytes is None else min(chunk_bytes, window)
    if max_pieces and -(-window // chunk) > max_pieces:
        chunk = round_up(-(-window // max_pieces), PAGE)
    pieces = []
    for off in range(0, window, chunk):
        length = min(chunk, window - off)
        last = off + length >= window
        # NOTE: only the last piece may be cut at EOF; it must still cover the payload.
        need = need_end - off if last else length
        pieces.append(Piece(file_off=lo + off, slot_off=off, length=length, need=need,
                            aligned=True))
    return ReadPlan(ref.shard, pad, window, tuple(pieces))


def complete(plan: ReadPlan, got: list[int]) -> bool:
    """Per-piece check (the fix): every piece delivered at least what it needs."""
    return all(g >= p.need for p, g in zip(plan.pieces, got, strict=True))


def sum_complete(plan: ReadPlan, got: list[int]) -> bool:
    """Upstream chunked variant's check, kept to show its flaw: a short middle chunk can hide
    behind tail padding that the last chunk read past the payload."""
    return sum(got) >= plan.need_end


class ShardFiles:
    """Open descriptors per shard: buffered, plus O_DIRECT where the filesystem allows it."""

    def __init__(self, index: ShardIndex, direct: bool = True) -> None:
        self.paths = index.paths
        self._fd = [os.open(p, os.O_RDONLY) for p in self.paths]
        self._direct: list[int] = []
        flag = getattr(os, "O_DIRECT", 0)
        for p in self.paths:
            fd = -1
            if direct and flag:
                try:
                    fd = os.open(p, os.O_RDONLY | flag)
                except OSError:  # tmpfs and some others refuse O_DIRECT at open
                    fd = -1
            self._direct.append(fd)

    @property
    def direct(self) -> bool:
        return any(fd >= 0 for fd in self._direct)

    def covers(self, shard: int, end: int) -> bool:
        """Whether the shard is (still) at least `end` bytes long."""
        return os.fstat(self._fd[shard]).st_size >= end

    def read_into(self, shard: int, dest: memoryview, file_off: int, aligned: bool) -> int:
        """Read up to len(dest) bytes; returns how many arrived (short at EOF or on error)."""
        fd = self._direct[shard] if aligned else -1
        if fd >= 0:
            try:
                return _pread_full(fd, dest, file_off, direct=True)
            except OSError as e:
                if e.errno != errno.EINVAL:
                    return 0
                self._direct[shard] = -1  # misaligned for this fs: buffered from now on
                os.close(fd)
        try:
            return _pread_full(self._fd[shard], dest, file_off, direct=False)
        except OSError:
            return 0

    def read_plan(self, plan: ReadPlan, slot_mem: memoryview) -> list[int]:
        return [
            self.read_into(plan.shard, slot_mem[p.slot_off : p.slot_off + p.length],
                           p.file_off, p.aligned)
            for p in plan.pieces
        ]

    def close(self) -> None:
        for fd in self._fd + [fd for fd in self._direct if fd >= 0]:
            os.close(fd)
        self._fd, self._direct = [], []


def _pread_full(fd: int, dest: memoryview, off: int, direct: bool) -> int:
    got = 0
    while got < len(dest):
        n = os.preadv(fd, [dest[got:]], off + got)
        if n <= 0:
            break
        got += n
        if direct and n % PAGE:  # O_DIRECT: a partial page means EOF
            break
    return got
