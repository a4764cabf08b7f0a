"""PagePool: one free list, refcounts, all-or-nothing alloc, invariants after every operation.

Pinned: a failed alloc changes nothing and names pages needed and free; double free and a
foreign page id raise; a shared page survives until its last reference goes; a hypothesis
state machine (against a dict of refcounts as the slow twin) keeps check() true throughout.
"""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from core.errors import ParamError
from core.paging.pool import OutOfPages, PageError, PageKind, PagePool

MLA, KDA = PageKind.MLA_KV, PageKind.KDA_STATE


def _snapshot(pool: PagePool):
    return pool.num_free, [pool.refcount(p) for p in range(pool.n_pages)], pool.used_by_kind()


class TestPool:
    def test_alloc_free_and_kinds(self):
        pool = PagePool(6, 64)
        a, b = pool.alloc(MLA, 2), pool.alloc(KDA, 3)
        assert len(set(a + b)) == 5 and pool.num_free == 1
        assert pool.used_by_kind() == {MLA: 2, KDA: 3}
        pool.free(a)
        assert pool.num_free == 3 and pool.kind(a[0]) is None
        pool.check()

    def test_failed_alloc_changes_nothing(self):
        pool = PagePool(4, 64)
        pool.alloc(MLA, 3)
        before = _snapshot(pool)
        with pytest.raises(OutOfPages, match="2 needed, 1 free"):
            pool.alloc(KDA, 2)
        assert _snapshot(pool) == before

    def test_shared_page_lives_until_its_last_reference(self):
        pool = PagePool(2, 64)
        (p,) = pool.alloc(MLA, 1)
        pool.incref([p])
        pool.free([p])
        assert pool.refcount(p) == 1 and pool.num_free == 1
        pool.free([p])
        assert pool.refcount(p) == 0 and pool.num_free == 2

    def test_double_free_and_foreign_pages_raise_and_change_nothing(self):
        pool = PagePool(3, 64)
        (p,) = pool.alloc(MLA, 1)
        pool.free([p])
        before = _snapshot(pool)
        with pytest.raises(PageError, match="double free"):
            pool.free([p])
        with pytest.raises(PageError, match="page id"):
            pool.free([3])
        q = pool.alloc(KDA, 1)
        with pytest.raises(PageError, match="double free"):
            pool.free([q[0], q[0]])  # freeing twice in one call is a double free too
        assert pool.refcount(q[0]) == 1
        pool.free(q)
        assert _snapshot(pool) == before

    @pytest.mark.parametrize(("kwargs", "name"), [
        ({"n_pages": 0, "page_bytes": 64}, "n_pages"),
        ({"n_pages": 4, "page_bytes": 0}, "page_bytes"),
        ({"n_pages": 2.5, "page_bytes": 64}, "n_pages"),
    ])
    def test_bad_sizes_name_the_parameter(self, kwargs, name):
        with pytest.raises(ParamError, match=name):
            PagePool(**kwargs)

    def test_bad_kind_names_it(self):
        with pytest.raises(ParamError, match="kind"):
            PagePool(2, 8).alloc("MLA_KV", 1)


class PoolMachine(RuleBasedStateMachine):
    """Random alloc / incref / free against a dict of refcounts."""

    def __init__(self) -> None:
        super().__init__()
        self.pool = PagePool(12, 16)
        self.refs: dict[int, int] = {}

    @rule(kind=st.sampled_from(list(PageKind)), n=st.integers(0, 6))
    def alloc(self, kind, n):
        free = 12 - len(self.refs)
        if n > free:
            before = _snapshot(self.pool)
            with pytest.raises(OutOfPages):
                self.pool.alloc(kind, n)
            assert _snapshot(self.pool) == before
            return
        for p in self.pool.alloc(kind, n):
            assert p not in self.refs
            self.refs[p] = 1

    @precondition(lambda self: self.refs)
    @rule(data=st.data())
    def incref(self, data):
        p = data.draw(st.sampled_from(sorted(self.refs)))
        self.pool.incref([p])
        self.refs[p] += 1

    @precondition(lambda self: self.refs)
    @rule(data=st.data())
    def free(self, data):
        p = data.draw(st.sampled_from(sorted(self.refs)))
        self.pool.free([p])
        self.refs[p] -= 1
        if not self.refs[p]:
            del self.refs[p]

    @rule(p=st.integers(0, 11))
    def free_a_free_page(self, p):
        if p not in self.refs:
            with pytest.raises(PageError):
                self.pool.free([p])

    @invariant()
    def agrees_with_the_twin(self):
        self.pool.check()
        assert self.pool.num_free == 12 - len(self.refs)
        assert all(self.pool.refcount(p) == self.refs.get(p, 0) for p in range(12))


TestPoolMachine = PoolMachine.TestCase
TestPoolMachine.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
