"""PrefixCache: the two-stage lookup, atomic ready groups, whole-group LRU eviction, pins.

Pinned: every stop reason on a hand-built cache; a collision (same digest, other bytes) is a
miss; a group is unusable until commit_step; a partial group is never used; eviction frees
whole groups, tail first, never a pinned entry, and the cache's pages are charged to the pool;
a hypothesis state machine keeps pool and cache invariants after every step and compares the
lookup with a slow twin that walks byte prefixes (no hashes).
"""

from __future__ import annotations

import torch
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from core.model.layers import KDAState
from core.paging.pool import PageKind, PagePool
from core.prefix import entries as E
from core.prefix.cache import PrefixCache
from tests.core.model.conftest import TINY

P = 64
PAGE = P * TINY.mla_bytes_per_token


def _state(seed: int) -> KDAState:
    g = torch.Generator().manual_seed(seed)
    d = TINY
    return KDAState(torch.randn(1, d.conv_size - 1, 3 * d.kda_inner, generator=g),
                    torch.randn(1, d.kda_heads, d.kda_head_dim, d.kda_head_dim, generator=g))


def _cache(n_pages: int = 200) -> PrefixCache:
    return PrefixCache(PagePool(n_pages, PAGE), TINY, P)


def _insert(cache: PrefixCache, prompt: bytes, groups=(), ready=True, partial=()) -> None:
    """Insert every full block of prompt (fresh pages), then groups at the given boundaries."""
    hashes = cache.hashes(prompt)
    for b, h in enumerate(hashes):
        if h in cache.blocks:
            continue
        pages = cache.pool.alloc(PageKind.MLA_KV, TINY.n_mla)
        cache.insert_block(h, hashes[b - 1] if b else None, prompt[b * P : (b + 1) * P],
                           tuple(pages))
        cache.pool.free(pages)  # the "request" retires; the cache keeps its reference
    for b in groups:
        states = [None if (b, i) in partial else _state(b * 10 + i) for i in range(TINY.n_kda)]
        assert cache.publish_group(hashes[b - 1], states)
    if ready:
        cache.commit_step()


PROMPT = bytes(range(256)) * 2  # 512 bytes: 8 blocks


class TestLookup:
    def test_short_and_miss(self):
        c = _cache()
        assert c.lookup(b"x" * 63).reason == E.SHORT
        r = c.lookup(PROMPT)
        assert (r.stage1_blocks, r.reusable_tokens, r.reason) == (0, 0, E.MISS)

    def test_hit_at_the_deepest_ready_group(self):
        c = _cache()
        _insert(c, PROMPT, groups=(2, 5))
        r = c.lookup(PROMPT[:6 * P] + b"tail")  # 6 blocks match; groups at 2 and 5
        assert (r.stage1_blocks, r.boundary_blocks, r.reason) == (6, 5, E.NO_CHECKPOINT)
        r = c.lookup(PROMPT[:5 * P] + b"tail")
        assert (r.boundary_blocks, r.reason, r.reusable_tokens) == (5, E.HIT, 320)

    def test_one_token_must_run(self):
        """A prompt that is exactly 5 cached blocks backs off to the group before."""
        c = _cache()
        _insert(c, PROMPT, groups=(2, 5))
        r = c.lookup(PROMPT[:5 * P])
        assert (r.boundary_blocks, r.reason) == (2, E.LAST_TOKEN)

    def test_not_ready_until_the_step_commits(self):
        c = _cache()
        _insert(c, PROMPT, groups=(4,), ready=False)
        r = c.lookup(PROMPT + b"!")
        assert (r.boundary_blocks, r.reason) == (0, E.NO_CHECKPOINT)
        assert r.boundary_status[3] == E.NOT_READY
        c.commit_step()
        assert c.lookup(PROMPT[:4 * P] + b"!").boundary_blocks == 4

    def test_partial_group_is_never_used_unless_checks_are_off(self):
        c = _cache()
        _insert(c, PROMPT, groups=(2, 4), partial={(4, 1)})
        r = c.lookup(PROMPT[:4 * P] + b"!")
        assert (r.boundary_blocks, r.reason) == (2, E.PARTIAL)
        assert c.lookup(PROMPT[:4 * P] + b"!", check_groups=False).boundary_blocks == 4

    def test_collision_is_a_miss(self):
        c = _cache()
        _insert(c, PROMPT, groups=(1,))
        h = c.hashes(PROMPT)[0]
        c.blocks[h].tokens = b"?" * P  # same digest, other bytes: a forced collision
        r = c.lookup(PROMPT)
        assert (r.stage1_blocks, r.collision, r.reason) == (0, True, E.MISS)


class TestEviction:
    def test_evicts_whole_groups_lru_and_says_evicted(self):
        c = _cache()
        per = c.geometry.kda_pages_per_layer * TINY.n_kda
        _insert(c, PROMPT, groups=(2, 4, 6))
        used = c.pool.num_used
        assert used == 8 * TINY.n_mla + 3 * per
        assert c.make_room(c.pool.num_free + per)  # one group must go: the deepest (a tie)
        assert set(c.groups) == set(c.hashes(PROMPT)[i] for i in (1, 3))
        r = c.lookup(PROMPT + b"!")
        assert r.boundary_status[5] == E.EVICTED and r.boundary_blocks == 4
        c.check()
        c.pool.check()

    def test_pinned_entries_are_never_evicted_and_impossible_room_changes_nothing(self):
        c = _cache(n_pages=40)
        _insert(c, PROMPT, groups=(4,))
        r = c.lookup(PROMPT + b"!")
        lease = c.acquire(PROMPT + b"!", r)
        before = (c.pool.num_free, set(c.blocks), set(c.groups))
        assert not c.make_room(c.pool.n_pages)
        assert (c.pool.num_free, set(c.blocks), set(c.groups)) == before
        c.release(lease)
        assert c.make_room(c.pool.n_pages) and not c.blocks and not c.groups
        c.pool.check()


def naive_lookup(prompts: list[bytes], ready: set[bytes], tokens: bytes) -> tuple[int, int]:
    """Slow twin: stage 1 by byte prefixes of inserted prompts, stage 2 by ready boundaries."""
    stage1 = 0
    for b in range(1, len(tokens) // P + 1):
        if any(p[: b * P] == tokens[: b * P] and len(p) >= b * P for p in prompts):
            stage1 = b
        else:
            break
    for b in range(stage1, 0, -1):
        if b * P < len(tokens) and tokens[: b * P] in ready:
            return stage1, b
    return stage1, 0


ALPHABET = [bytes([c]) * P for c in b"abc"]


class CacheMachine(RuleBasedStateMachine):
    """Insert prompts (with groups every k blocks), look up, evict; a roomy pool, no eviction
    in insert, so the twin knows exactly what is cached until an explicit evict."""

    def __init__(self) -> None:
        super().__init__()
        self.c = _cache(n_pages=400)
        self.prompts: list[bytes] = []
        self.ready: set[bytes] = set()

    @rule(blocks=st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=5),
          k=st.integers(1, 3), commit=st.booleans())
    def insert(self, blocks, k, commit):
        prompt = b"".join(blocks)
        hashes = self.c.hashes(prompt)
        if self.c.pool.num_free < 60:
            return
        _insert(self.c, prompt, groups=(), ready=False)
        for b in range(k, len(blocks) + 1, k):
            if self.c.publish_group(hashes[b - 1], [_state(b)] * TINY.n_kda):
                self._pending = getattr(self, "_pending", []) + [prompt[: b * P]]
        if commit:
            self.c.commit_step()
            self.ready |= set(getattr(self, "_pending", []))
            self._pending = []
        self.prompts.append(prompt)

    @rule(blocks=st.lists(st.sampled_from(ALPHABET), min_size=0, max_size=6),
          tail=st.binary(max_size=3))
    def lookup(self, blocks, tail):
        tokens = b"".join(blocks) + tail
        r = self.c.lookup(tokens)
        assert (r.stage1_blocks, r.boundary_blocks) == naive_lookup(self.prompts, self.ready,
                                                                    tokens)
        assert r.reason in E.REASONS

    @rule()
    def evict_everything(self):
        assert self.c.make_room(self.c.pool.n_pages)
        assert not self.c.blocks and not self.c.groups
        self.prompts, self.ready, self._pending = [], set(), []

    @invariant()
    def consistent(self):
        self.c.check()
        self.c.pool.check()
        held = self.c.held_pages()
        assert self.c.pool.num_used == held[PageKind.MLA_KV] + held[PageKind.KDA_STATE]


TestCacheMachine = CacheMachine.TestCase
TestCacheMachine.settings = settings(max_examples=40, stateful_step_count=20, deadline=None)
