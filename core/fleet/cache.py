"""Per-cluster prefix cache: an LRU of chained 512-token block ids with a finite capacity.

A block id names the whole prefix up to and including that block (a chained hash), so the hit
of a request is the run of leading ids present in the cache. Blocks are touched tail first
(last block, then back to the first), so a prefix's head is always more recent than its tail
and eviction removes tails before heads: the cached blocks of any chain stay a prefix, as with
vLLM's reverse-order free queue and SGLang's leaf-first radix eviction.
"""

from __future__ import annotations

from collections import OrderedDict

from core.errors import check_int


class PrefixCache:
    """LRU over block ids: match() asks, match_and_insert() commits (hits touched, misses added)."""

    def __init__(self, capacity_blocks: int, block_size: int = 512) -> None:
        self.capacity_blocks = check_int("capacity_blocks", capacity_blocks, 0)
        self.block_size = check_int("block_size", block_size, 1)
        self._lru: OrderedDict[int, None] = OrderedDict()  # oldest first
        self.num_lookups = 0
        self.num_hit_blocks = 0
        self.num_evicted = 0

    def __len__(self) -> int:
        return len(self._lru)

    def __contains__(self, block_id: int) -> bool:
        return block_id in self._lru

    @property
    def tokens(self) -> int:
        """Tokens held (full blocks only)."""
        return len(self._lru) * self.block_size

    def match(self, blocks: list[int]) -> int:
        """Number of leading blocks present; changes nothing."""
        lru = self._lru
        n = 0
        for b in blocks:
            if b not in lru:
                break
            n += 1
        return n

    def match_and_insert(self, blocks: list[int]) -> int:
        """Leading hit count; then every block of the prompt becomes most recent, head last."""
        lru = self._lru
        hit = 0
        for b in blocks:
            if b not in lru:
                break
            hit += 1
        cap = self.capacity_blocks
        if cap:
            move = lru.move_to_end
            for b in reversed(blocks):
                if b in lru:
                    move(b)
                else:
                    lru[b] = None
            excess = len(lru) - cap
            if excess > 0:
                self.num_evicted += excess
                pop = lru.popitem
                for _ in range(excess):
                    pop(last=False)
        self.num_lookups += 1
        self.num_hit_blocks += hit
        return hit

    def clear(self) -> int:
        """Drop everything (a failed cluster); returns the number of blocks lost."""
        lost = len(self._lru)
        self._lru.clear()
        return lost

    def snapshot(self) -> tuple[int, ...]:
        """Block ids from least to most recently used."""
        return tuple(self._lru)


def match_all(caches: list[PrefixCache], blocks: list[int], live: list[bool]) -> list[int]:
    """PrefixCache.match() for every cache at once (-1 where not live): the router's hot path."""
    out = []
    for cache, alive in zip(caches, live, strict=True):
        if not alive:
            out.append(-1)
            continue
        lru = cache._lru
        n = 0
        for b in blocks:
            if b not in lru:
                break
            n += 1
        out.append(n)
    return out


class NaivePrefixCache:
    """Slow twin of PrefixCache: a plain list in recency order, scanned linearly."""

    def __init__(self, capacity_blocks: int, block_size: int = 512) -> None:
        self.capacity_blocks = check_int("capacity_blocks", capacity_blocks, 0)
        self.block_size = check_int("block_size", block_size, 1)
        self.order: list[int] = []  # least recently used first

    def match(self, blocks: list[int]) -> int:
        n = 0
        while n < len(blocks) and blocks[n] in self.order:
            n += 1
        return n

    def match_and_insert(self, blocks: list[int]) -> int:
        hit = self.match(blocks)
        if self.capacity_blocks == 0:
            return hit
        for b in reversed(blocks):
            if b in self.order:
                self.order.remove(b)
            self.order.append(b)
        while len(self.order) > self.capacity_blocks:
            self.order.pop(0)
        return hit

    def snapshot(self) -> tuple[int, ...]:
        return tuple(self.order)
