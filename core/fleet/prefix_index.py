"""Per-cluster prefix index: an LRU of chained 512-token block ids with a finite capacity.

The fleet's model of one cluster's prefix cache: it indexes which blocks are held, not their
contents (the engine's cache of pages and checkpoint groups is core.prefix.cache.PrefixCache).

Capacity is in block-equivalents of memory. On a hybrid model a reusable prefix also needs a KDA
checkpoint group at its boundary (core.prefix): every `every`-th block of a chain carries one,
which costs `group_cost` blocks more (K3: about 31.7 blocks' worth of MLA KV, core.dims), so a
cache that keeps dense checkpoints holds far fewer blocks. Reuse itself follows core.prefix's
rule (core.prefix.rule.usable_blocks), applied by the simulator.

A block id names the whole prefix up to and including that block (a chained hash), so the hit
of a request is the run of leading ids present in the cache. Blocks are touched tail first
(last block, then back to the first), so a prefix's head is always more recent than its tail
and eviction removes tails before heads: the cached blocks of any chain stay a prefix, as with
vLLM's reverse-order free queue and SGLang's leaf-first radix eviction.
"""

from __future__ import annotations

from collections import OrderedDict

from core.errors import check_float, check_int

MILLI = 1000  # costs are kept in thousandths of a block


def _milli(blocks: float) -> int:
    return round(blocks * MILLI)


class PrefixIndex:
    """LRU over block ids: match() asks, match_and_insert() commits (hits touched, misses added)."""

    def __init__(self, capacity_blocks: int, block_size: int = 512, every: int = 1,
                 group_cost: float = 0.0) -> None:
        self.capacity_blocks = check_int("capacity_blocks", capacity_blocks, 0)
        self.block_size = check_int("block_size", block_size, 1)
        self.every = check_int("every", every, 1)
        self.group_cost = check_float("group_cost", group_cost, 0.0, 1e6)
        self._lru: OrderedDict[int, int] = OrderedDict()  # block id -> cost (milli); oldest first
        self.used = 0  # milli-block-equivalents held (integers: no drift over a long run)
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
            move, every, group = lru.move_to_end, self.every, _milli(1.0 + self.group_cost)
            for i in range(len(blocks) - 1, -1, -1):
                b = blocks[i]
                if b in lru:
                    move(b)
                else:
                    cost = group if (i + 1) % every == 0 else MILLI
                    lru[b] = cost
                    self.used += cost
            pop = lru.popitem
            cap *= MILLI
            while self.used > cap:
                self.used -= pop(last=False)[1]
                self.num_evicted += 1
        self.num_lookups += 1
        self.num_hit_blocks += hit
        return hit

    def clear(self) -> int:
        """Drop everything (a failed cluster); returns the number of blocks lost."""
        lost = len(self._lru)
        self._lru.clear()
        self.used = 0
        return lost

    def snapshot(self) -> tuple[int, ...]:
        """Block ids from least to most recently used."""
        return tuple(self._lru)


def match_all(caches: list[PrefixIndex], blocks: list[int], live: list[bool]) -> list[int]:
    """PrefixIndex.match() for every cache at once (-1 where not live): the router's hot path."""
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


class NaivePrefixIndex:
    """Slow twin of PrefixIndex: a plain list in recency order, scanned linearly."""

    def __init__(self, capacity_blocks: int, block_size: int = 512, every: int = 1,
                 group_cost: float = 0.0) -> None:
        self.capacity_blocks = check_int("capacity_blocks", capacity_blocks, 0)
        self.block_size = check_int("block_size", block_size, 1)
        self.every, self.group_cost = every, group_cost
        self.order: list[int] = []  # least recently used first
        self.cost: dict[int, int] = {}  # milli-blocks

    def match(self, blocks: list[int]) -> int:
        n = 0
        while n < len(blocks) and blocks[n] in self.order:
            n += 1
        return n

    def match_and_insert(self, blocks: list[int]) -> int:
        hit = self.match(blocks)
        if self.capacity_blocks == 0:
            return hit
        for i in reversed(range(len(blocks))):
            b = blocks[i]
            if b in self.order:
                self.order.remove(b)
            else:
                group = (i + 1) % self.every == 0
                self.cost[b] = _milli(1.0 + self.group_cost) if group else MILLI
            self.order.append(b)
        while sum(self.cost[b] for b in self.order) > self.capacity_blocks * MILLI:
            del self.cost[self.order.pop(0)]
        return hit

    def snapshot(self) -> tuple[int, ...]:
        return tuple(self.order)
