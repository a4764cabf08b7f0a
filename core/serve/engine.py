"""Engine: the tiny hybrid model served over a page pool with a two-stage prefix cache.

One request at a time (nano-vllm's shape: admit, prefill, decode, publish, retire):
  admit    prefix lookup; the pages the request can need (prompt + n_new tokens) must be free
           or reclaimable from unpinned cache entries, else OutOfPages with nothing changed;
           the KDA state pages and the prompt's MLA pages are allocated now, later MLA pages
           as decode grows (evicting reclaimable cache entries if the pool is short), so a
           request never fails midway.
  restore  the reused blocks' MLA pages are shared (refcount); the checkpoint group's KDA states
           are copied into the request's own pages (the group stays intact).
  prefill  the uncached suffix in one forward (the same arithmetic as HybridLM.forward), which
           also captures the KDA states at every retained boundary (kda_chunked_states).
  publish  new full prompt blocks and their checkpoint groups (every `checkpoint_every` blocks);
           groups become ready at the end of the step. Only the prompt is published: decode
           never publishes, so a rejected draft can never reach the cache.
  decode   draft_len = 0: greedy steps over the pages (load state, HybridLM.step, store).
           draft_len = gamma > 0: speculative steps (core.serve.speculative): the prompt-lookup
           drafter proposes up to gamma bytes, one verify pass checks them with the step's
           arithmetic (core.serve.verify), the accepted prefix is committed (KDA by replay,
           conv tail, MLA latents) and MLA pages past the accepted length are released.
  retire   the request's pages are freed; what the prefix cache retains stays.
Oracle: a prefix hit gives the last logits of a cold forward (max abs <= 1e-4); with no reuse
`generate` equals HybridLM.generate byte for byte, for every draft_len in [0, 8].
`stream` yields the same run as it happens (reports.py lists the events).
"""
from __future__ import annotations

import time
from collections.abc import Iterator

import torch

from core.errors import ParamError, check_int
from core.model.experts import ExpertProvider
from core.model.layers import KDAState
from core.model.model import DecodeState, HybridLM
from core.paging.ledger import toy_geometry
from core.paging.pool import OutOfPages, PageKind, PagePool
from core.paging.sequence import PagedSequence
from core.prefix.cache import PrefixCache
from core.prefix.entries import Lease, LookupResult
from core.prefix.hashing import check_prompt
from core.serve.drafter import Drafter, PromptLookup
from core.serve.reports import DecodeStep, GenerateReport, PoolUsage, PrefillReport, VerifyStep
from core.serve.speculative import speculate, summarize

KDA_CHUNK = 64  # checkpoints are captured at KDA chunk boundaries: pages are a multiple
MAX_PROMPT = 1 << 20
MAX_NEW = 1 << 16
MAX_DRAFT = 8  # gamma: drafts per verify pass
Event = PrefillReport | DecodeStep | VerifyStep | GenerateReport


class Engine:
    def __init__(self, model: HybridLM, pool_pages: int, tokens_per_page: int = 64,
                 checkpoint_every: int = 1, prefix_cache: bool = True,
                 provider: ExpertProvider | None = None,
                 drafter: Drafter | None = None, adaptive_drafts: bool = True) -> None:
        if not isinstance(model, HybridLM):
            raise ParamError(f"model must be a HybridLM, got {type(model).__name__}")
        self.P = check_int("tokens_per_page", tokens_per_page, KDA_CHUNK, 1024)
        if self.P % KDA_CHUNK:
            raise ParamError(f"tokens_per_page must be a multiple of {KDA_CHUNK} (the KDA chunk, "
                             f"where checkpoints are exact), got {self.P}")
        self.checkpoint_every = check_int("checkpoint_every", checkpoint_every, 1, 1 << 20)
        self.model, self.dims = model, model.dims
        self.provider = provider
        if drafter is not None and not isinstance(drafter, Drafter):
            raise ParamError(f"drafter must have propose(history, n) -> bytes, "
                             f"got {type(drafter).__name__}")
        self.drafter: Drafter = drafter or PromptLookup()
        if not isinstance(adaptive_drafts, bool):
            raise ParamError(f"adaptive_drafts must be True or False, got {adaptive_drafts!r}")
        self.adaptive_drafts = adaptive_drafts  # the draft budget follows acceptance
        page_bytes = self.P * self.dims.mla_bytes_per_token
        smallest = toy_geometry(self.dims, self.P).pages(1)  # one token: the KDA state + 1 page
        self.pool = PagePool(check_int("pool_pages", pool_pages, smallest, 1 << 20), page_bytes)
        self.cache = PrefixCache(self.pool, self.dims, self.P) if prefix_cache else None

    # ---- public ---------------------------------------------------------------------------
    @torch.no_grad()
    def prefill(self, prompt: bytes, check_groups: bool = True) -> PrefillReport:
        """Serve a prompt's prefill and retire it (what the cache retains stays)."""
        req = _Request(self, _check(prompt), 0, check_groups)
        try:
            return req.prefill()
        finally:
            req.retire()

    def generate(self, prompt: bytes, n_new: int, draft_len: int = 0) -> GenerateReport:
        """Prefill, then n_new greedy bytes over the pages; draft_len > 0 decodes
        speculatively with up to draft_len drafts per verify pass (the same bytes)."""
        *_, report = self.stream(prompt, n_new, draft_len)
        return report

    def stream(self, prompt: bytes, n_new: int, draft_len: int = 0) -> Iterator[Event]:
        """generate, as it happens: PrefillReport, then a DecodeStep per token (draft_len 0)
        or a VerifyStep per verify pass, then the GenerateReport. Bad input raises here, before
        any work. Closing the iterator early (a Stop button) retires the request: its pages
        go back, the prefix cache keeps what the prefill published."""
        n_new = check_int("n_new", n_new, 0, MAX_NEW)
        draft_len = check_int("draft_len", draft_len, 0, MAX_DRAFT)
        return self._run(_check(prompt), n_new, draft_len)

    @torch.no_grad()
    def _run(self, prompt: bytes, n_new: int, draft_len: int) -> Iterator[Event]:
        req = _Request(self, prompt, n_new, True)
        try:
            pre = req.prefill()
            yield pre
            if draft_len == 0:
                steps = []
                for st in req.decode(pre.last_logits, n_new):
                    steps.append(st)
                    yield st
                yield GenerateReport(text=bytes(s.token for s in steps), prefill=pre,
                                     steps=tuple(steps), pages=req.usage())
                return
            verify = []
            for st in speculate(req, pre.last_logits, n_new, draft_len):
                verify.append(st)
                yield st
            first = bytes([int(pre.last_logits.argmax(-1))]) if n_new else b""
            yield GenerateReport(text=first + b"".join(bytes(st.emitted) for st in verify),
                                 prefill=pre, steps=(), pages=req.usage(),
                                 verify=tuple(verify), spec=summarize(verify, draft_len))
        finally:
            req.retire()

    def check(self) -> None:
        self.pool.check()
        if self.cache is not None:
            self.cache.check()


def _check(prompt: object) -> bytes:
    prompt = check_prompt(prompt)
    if not 1 <= len(prompt) <= MAX_PROMPT:
        raise ParamError(f"prompt must have 1 to {MAX_PROMPT:,} bytes, got {len(prompt)}")
    return prompt


class _Request:
    """One request's life in the engine: its pages, its lease on the cache, its tokens."""

    def __init__(self, eng: Engine, prompt: bytes, n_new: int, check_groups: bool) -> None:
        self.eng, self.prompt, self.tokens = eng, prompt, list(prompt)
        self.t0 = time.perf_counter()
        self.seq = PagedSequence(eng.pool, eng.dims, eng.P)
        self.lease: Lease | None = None
        cache = eng.cache
        self.lookup: LookupResult | None = (
            cache.lookup(prompt, check_groups) if cache is not None else None)
        reused = self.lookup.boundary_blocks if self.lookup is not None else 0
        need = self.seq.pages_needed(len(prompt) + n_new, reused)
        if cache is not None:
            self.lease = cache.acquire(prompt, self.lookup)  # pinned: eviction cannot take it
            if not cache.make_room(need):
                cache.release(self.lease)
                free, spare = eng.pool.num_free, cache.reclaimable_pages()
                raise OutOfPages(need, free, f"this request ({spare} more reclaimable from "
                                             f"the prefix cache)")
            cache.touch(self.lease, self.lookup)
        elif eng.pool.num_free < need:
            raise OutOfPages(need, eng.pool.num_free, "this request")
        self.seq.allocate_state()
        if self.lease is not None and self.lease.blocks:
            self.seq.adopt(cache.block_pages(self.lease))
        self.seq.grow(len(prompt))

    def _restore(self) -> None:
        """Copy the checkpoint group's KDA states into the request's pages."""
        if self.lease is None or self.lease.group is None:
            return
        states = self.eng.cache.read_group(self.lease.group)
        kda_blank = [s for s in self.eng.model.new_state(1).layers if isinstance(s, KDAState)]
        for i, s in enumerate(states):
            self.seq.write_kda(i, s if s is not None else kda_blank[i])  # None: the bug, shown

    def prefill(self) -> PrefillReport:
        eng, cache = self.eng, self.eng.cache
        self._restore()
        reused = self.seq.length
        state = self.seq.load(self.tokens[:reused])
        idx = torch.tensor([self.tokens[reused:]], dtype=torch.long)  # [1, T - reused]
        capture = self._capture_points(reused) if cache is not None else ()
        out = eng.model.forward(idx, state, eng.provider, capture_at=capture)
        self.seq.store(state)
        blocks, groups = self._publish(state, reused, capture)
        return PrefillReport(
            last_logits=out.logits[0, -1], prompt_tokens=len(self.prompt), reused_tokens=reused,
            computed_tokens=len(self.prompt) - reused, lookup=self.lookup,
            seconds=time.perf_counter() - self.t0, published_blocks=blocks,
            published_groups=groups, pages=self.usage())

    def _capture_points(self, reused: int) -> tuple[int, ...]:
        """Retained boundaries past the reused prefix, relative to the forward's start."""
        P, k = self.eng.P, self.eng.checkpoint_every
        full = len(self.prompt) // P
        return tuple(b * P - reused for b in range(1, full + 1)
                     if b % k == 0 and b * P > reused)

    def _publish(self, state: DecodeState, reused: int, capture: tuple[int, ...]
                 ) -> tuple[int, int]:
        cache = self.eng.cache
        if cache is None:
            return 0, 0
        P, hashes = self.eng.P, cache.hashes(self.prompt)
        blocks = groups = 0
        for b, h in enumerate(hashes):
            parent = hashes[b - 1] if b else None
            blocks += cache.insert_block(h, parent, self.prompt[b * P : (b + 1) * P],
                                         self.seq.block_pages(b))
        kda = [s for s in state.layers if isinstance(s, KDAState)]
        for j, rel in enumerate(capture):
            b = (rel + reused) // P
            groups += cache.publish_group(hashes[b - 1], [s.captured[j] for s in kda])
        for s in kda:
            s.captured = []
        cache.commit_step()
        return blocks, groups

    def decode(self, logits: torch.Tensor, n_new: int) -> Iterator[DecodeStep]:
        eng = self.eng
        for i in range(n_new):
            t0 = time.perf_counter()
            tok = int(logits.argmax(-1))
            state = self.seq.load(self.tokens)
            logits = eng.model.step(torch.tensor([tok]), state, eng.provider).logits[0]  # [V]
            self.grow(state.pos)
            self.seq.store(state)
            self.tokens.append(tok)
            yield DecodeStep(i, tok, time.perf_counter() - t0, len(self.tokens))

    # ---- MLA pages as the sequence grows and shrinks -----------------------------------------
    def grow(self, tokens: int) -> int:
        """MLA pages for `tokens` tokens; evicts reclaimable cache entries if the pool is short
        (admission guaranteed they exist). Returns the pages allocated."""
        seq = self.seq
        need = seq.dims.n_mla * max(0, -(-tokens // seq.P) - len(seq.mla_tables[0]))
        if need > self.eng.pool.num_free and self.eng.cache is not None:
            self.eng.cache.make_room(need)
        seq.grow(tokens)  # raises OutOfPages if even eviction could not make room
        return need

    def release_past(self, tokens: int) -> int:
        """Return the MLA pages past the first `tokens` tokens to the pool; the count freed."""
        keep = -(-tokens // self.seq.P)
        freed = [p for table in self.seq.mla_tables for p in table[keep:]]
        for table in self.seq.mla_tables:
            del table[keep:]
        if freed:
            self.eng.pool.free(freed)
        return len(freed)

    def usage(self) -> PoolUsage:
        pool, cache = self.eng.pool, self.eng.cache
        held = cache.held_pages() if cache is not None else dict.fromkeys(PageKind, 0)
        return PoolUsage(
            request_mla=sum(len(t) for t in self.seq.mla_tables),
            request_kda=sum(len(g) for g in self.seq.kda_groups),
            cache_mla=held[PageKind.MLA_KV], cache_kda=held[PageKind.KDA_STATE],
            free=pool.num_free, total=pool.n_pages)

    def retire(self) -> None:
        self.seq.release()
        if self.lease is not None:
            self.eng.cache.release(self.lease)
            self.lease = None
