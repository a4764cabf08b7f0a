"""Speculative decoding in the engine: the same bytes as greedy, and rollback leaks nothing.

Pinned: for hypothesis prompts and every gamma in 1..8, Engine.generate(prompt, n_new,
draft_len=gamma).text equals HybridLM.generate exactly, with the pool's check() holding after
every streamed step. An oracle drafter (the true greedy continuation, corrupted where a test
says) makes acceptance known for any weights: all accepted replays nothing, a first wrong draft
accepts 0 and replays 1 position, a window across a page boundary that is rejected gives its
page back; pages per step equal the stored length's; a stream closed midway (Stop) returns
every page. Rollback bytes follow core.speculative's byte model plus the pre-conv rows; expert loads
through the cache are charged to the window position that needed them and add up to the
cache's misses.
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import ParamError
from core.model.providers import CacheProvider, open_cache
from core.model.weights import ASSET_DIR
from core.serve import Engine, GenerateReport, PrefillReport, PromptLookup, VerifyStep
from core.speculative import rollback_bytes

pytestmark = pytest.mark.usefixtures("one_thread")

P = 64


@functools.cache
def _greedy(model, prompt: bytes, n_new: int) -> bytes:
    return model.generate(prompt, n_new)


class Oracle:
    """Drafts the true greedy continuation; bytes at positions in `wrong` are flipped."""

    def __init__(self, prompt: bytes, truth: bytes, wrong: set[int] = frozenset()) -> None:
        self.n0, self.truth, self.wrong = len(prompt), truth, wrong

    def propose(self, history: bytes | bytearray, n: int) -> bytes:
        at = len(history) - self.n0  # truth[:at] is emitted
        out = bytearray(self.truth[at : at + n])
        for i in range(len(out)):
            if at + i in self.wrong:
                out[i] ^= 0x55
        return bytes(out)


def _stream(eng: Engine, prompt: bytes, n_new: int, gamma: int) -> GenerateReport:
    events = []
    for ev in eng.stream(prompt, n_new, draft_len=gamma):
        eng.check()
        events.append(ev)
    assert isinstance(events[0], PrefillReport) and isinstance(events[-1], GenerateReport)
    assert all(isinstance(e, VerifyStep) for e in events[1:-1])
    return events[-1]


def _pages_only_cache(eng: Engine) -> None:
    held = sum(eng.cache.held_pages().values()) if eng.cache is not None else 0
    assert eng.pool.num_used == held
    eng.check()


REPEATS = st.builds(lambda unit, k, tail: (unit * k + tail)[:200],
                    st.binary(min_size=1, max_size=12), st.integers(2, 20),
                    st.binary(max_size=8))
PROMPTS = st.one_of(REPEATS, st.binary(min_size=1, max_size=120))


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prompt=PROMPTS, gamma=st.integers(1, 8), n_new=st.integers(1, 16),
       cache=st.booleans())
def test_speculative_equals_greedy(shipped, prompt, gamma, n_new, cache):
    eng = Engine(shipped, pool_pages=120, prefix_cache=cache)
    out = _stream(eng, prompt, n_new, gamma)
    assert out.text == shipped.generate(prompt, n_new)
    assert all(s.drafted <= gamma for s in out.verify)
    assert 1 + sum(len(s.emitted) for s in out.verify) == n_new
    _pages_only_cache(eng)


def test_every_gamma_on_a_repetitive_prompt(shipped):
    prompt = b"for i in range(10):\n    total += i\n" * 4
    want = shipped.generate(prompt, 16)
    eng = Engine(shipped, pool_pages=120)
    for gamma in range(1, 9):
        out = eng.generate(prompt, 16, draft_len=gamma)
        assert out.text == want, f"gamma={gamma}"
        assert out.spec.draft_len == gamma and out.spec.accepted > 0
    _pages_only_cache(eng)


class TestOracleDrafts:
    PROMPT = (b"def area(r):\n    return 3.14 * r * r\n\n" * 2)[:P - 1]  # 63 bytes: 1 page

    def _run(self, shipped, wrong: set[int], gamma: int = 8, n_new: int = 30):
        truth = _greedy(shipped, self.PROMPT, n_new)
        eng = Engine(shipped, pool_pages=120, prefix_cache=False,
                     drafter=Oracle(self.PROMPT, truth, wrong))
        out = _stream(eng, self.PROMPT, n_new, gamma)
        assert out.text == truth
        _pages_only_cache(eng)
        return out

    def test_all_accepted_replays_nothing(self, shipped):
        out = self._run(shipped, set())
        assert out.spec.acceptance == 1.0 and out.spec.replayed == 0
        assert all(s.emitted == tuple(s.window[1:]) + s.emitted[-1:] for s in out.verify)
        assert len(out.verify) == -(-(30 - 1) // 9)  # 9 bytes per full window

    def test_a_wrong_draft_accepts_the_prefix_and_replays_it(self, shipped):
        out = self._run(shipped, {1, 13})
        first = out.verify[0]  # truth[1] is its first draft
        assert (first.drafted, first.accepted, first.replayed) == (8, 0, 1)
        assert all(s.accepted == s.drafted or s.replayed == s.accepted + 1 for s in out.verify)

    def test_rejected_window_across_a_page_gives_the_page_back(self, shipped):
        out = self._run(shipped, {1})
        n_mla = shipped.dims.n_mla
        first = out.verify[0]  # stored 63, window 63..71 crosses 64, keeps 64 tokens
        assert (first.start, first.length) == (63, 64)
        assert (first.pages_grown, first.pages_released) == (n_mla, n_mla)
        for s in out.verify:
            assert s.pages.request_mla == n_mla * -(-s.length // P)

    def test_rollback_bytes_follow_the_byte_model(self, shipped):
        out = self._run(shipped, {5})
        d = shipped.dims
        H, K = d.kda_heads, d.kda_head_dim
        c = rollback_bytes(H, K, K, 1, state_bytes=4, k_bytes=4, v_bytes=4, g_bytes=4,
                           beta_bytes=4, include_q=True, q_bytes=4)
        row = 3 * d.kda_inner * 4  # one position's pre-conv q|k|v row
        for s in out.verify:
            T = len(s.window)
            if T == 1:  # no drafts: nothing can be rolled back, nothing is held
                assert s.replay_bytes == s.snapshot_bytes == 0
                continue
            assert s.replay_bytes == d.n_kda * T * (c.raw_bytes_per_step + row)
            assert s.snapshot_bytes == d.n_kda * T * (c.snapshot_bytes_per_step
                                                      + (d.conv_size - 1) * row)
            per = 2 * c.snapshot_bytes_per_step + s.replayed * (c.raw_bytes_per_step + row)
            assert s.replay_moved == (d.n_kda * per if s.replayed else 0)
            assert s.snapshot_bytes > 5 * s.replay_bytes


def test_the_draft_budget_follows_acceptance(shipped):
    """Every draft wrong: windows shrink 8, 7, ... 1 (adaptive) or stay at gamma (fixed)."""
    prompt = TestOracleDrafts.PROMPT
    truth = _greedy(shipped, prompt, 30)
    wrong = set(range(30))
    for adaptive in (True, False):
        eng = Engine(shipped, pool_pages=120, prefix_cache=False, adaptive_drafts=adaptive,
                     drafter=Oracle(prompt, truth, wrong))
        out = eng.generate(prompt, 12, draft_len=8)
        assert out.text == truth[:12] and out.spec.accepted == 0
        want = [8, 7, 6, 5, 4, 3, 2, 1, 1, 1, 1] if adaptive else [8] * 11
        assert [s.drafted for s in out.verify] == [min(w, 10 - i) for i, w in enumerate(want)]


def test_expert_loads_are_charged_to_positions(shipped):
    prompt = b"def area(r):\n    return 3.14 * r * r\n\n"
    truth = _greedy(shipped, prompt, 24)
    d = shipped.dims
    for wrong, empty in (({1, 10, 19}, None), (set(), "rejected_drafts")):
        with open_cache(ASSET_DIR, d, d.top_k + 2) as cache:
            eng = Engine(shipped, 60, prefix_cache=False, provider=CacheProvider(cache),
                         drafter=Oracle(prompt, truth, wrong))
            it = eng.stream(prompt, 24, draft_len=6)
            next(it)  # the prefill
            before = cache.stats().demand_misses
            *_, out = it
            assert out.text == truth
            assert out.spec.loads.total == cache.stats().demand_misses - before > 0
            assert out.spec.loads.drafted > 0
            if empty is not None:
                assert getattr(out.spec.loads, empty) == 0
            else:
                assert out.spec.loads.rejected_drafts > 0


def test_the_prefix_cache_holds_only_committed_work(shipped):
    """Decode never publishes: after rejected drafts the cache is what plain greedy leaves."""
    prompt = (b"def area(r):\n    return 3.14 * r * r\n\n" * 6)[:200]
    held = []
    for gamma in (0, 8):
        eng = Engine(shipped, pool_pages=120)
        out = eng.generate(prompt, 20, draft_len=gamma)
        assert gamma == 0 or out.spec.drafted > out.spec.accepted  # something was rolled back
        held.append((set(eng.cache.blocks), set(eng.cache.groups), eng.pool.num_used))
    assert held[0] == held[1]


def test_stop_midway_returns_every_page(shipped):
    eng = Engine(shipped, pool_pages=120)
    it = eng.stream(b"abcabcabcabcabcabc", 40, draft_len=4)
    next(it), next(it), next(it)
    assert eng.pool.num_used > sum(eng.cache.held_pages().values())
    it.close()
    _pages_only_cache(eng)


def test_tokens_per_second_and_acceptance_totals(shipped):
    eng = Engine(shipped, pool_pages=120)
    out = eng.generate(b"ab" * 30, 20, draft_len=4)
    s = out.spec
    assert s.steps == len(out.verify) and s.accepted <= s.drafted
    assert s.acceptance == s.accepted / s.drafted
    assert out.tokens_per_second == 20 / out.decode_seconds


def test_prompt_lookup_drafts():
    d = PromptLookup()
    assert d.propose(b"abcab", 3) == b"cab"  # "ab" recurs: "c" followed, then it repeats
    assert d.propose(b"xyzq", 4) == b""  # no suffix recurs
    assert d.propose(b"aaaa", 5) == b"aaaaa"
    assert d.propose(b"the cat. the c", 2) == b"at"


@pytest.mark.parametrize(("call", "name"), [
    (lambda e: e.generate(b"x", 4, draft_len=9), "draft_len"),
    (lambda e: e.generate(b"x", 4, draft_len=-1), "draft_len"),
    (lambda e: e.stream(b"x", -1, draft_len=2), "n_new"),
    (lambda e: e.stream(b"x", 1 << 17), "n_new"),
    (lambda e: Engine(e.model, 50, drafter="lookup"), "drafter"),
    (lambda e: PromptLookup(max_ngram=0), "max_ngram"),
])
def test_bad_input_names_the_parameter(shipped, call, name):
    with pytest.raises(ParamError, match=name):
        call(Engine(shipped, pool_pages=50))
