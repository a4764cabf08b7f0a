"""`python -m core.bench serve`: what prefix reuse saves, how fast lookup is, what pages cost.

prefill   a 2,048-byte prompt served cold vs with a 1,536-byte prefix cached (a fresh engine
          per run: the cached run first serves the 1,536-byte prefix, untimed); target: the
          cached prefill saves >= 60% of the cold time
lookup    a 1,000,000-byte prompt whose every 64-byte block is in the index (inserted
          directly, no model run; no checkpoint groups, so stage 2 walks all the way back);
          target <= 50 ms
pages     pages and bytes per 1k tokens of one sequence, toy and K3 (from the ledger)
spec      speculative (prompt lookup, gamma = 8) vs plain greedy decoding of 64 bytes, side by
          side in one run (core.serve.compare: interleaved, best of --repeat each) on a loop
          body repeated verbatim (REPEATED: prompt lookup's best case; target >= 1.5x tokens/s)
          and on the lab's three prompt kinds (core.serve.prompts: held-out code, records and
          prose), with the acceptance rate and bytes per forward pass; both sides must produce
          the same bytes.
          One intra-op thread: decoding one sequence of the tiny model is a stream of small
          ops, and a second thread only adds a fork/join per op (on a busy 2-core machine it
          made both sides 5-10x slower and the comparison noise)
cp        context-parallel KDA prefill: bytes per rank per layer vs MLA ring attention at P = 8
          and the crossover sequence length, toy and K3 (core.kda.parallel; no timing)
Times are best-of (core.bench.timing.best_of) on the shipped weights, 2 threads.
"""

from __future__ import annotations

import argparse
import time

import torch

from core.bench.timing import best_of
from core.kda import cp_crossover, cp_volume, k3_cp, toy_cp
from core.model.config import ModelDims
from core.model.model import HybridLM
from core.model.weights import load_model
from core.paging.ledger import k3_geometry, toy_geometry
from core.paging.pool import PageKind, PagePool
from core.prefix.cache import PrefixCache
from core.serve import Engine
from core.serve.compare import compare_decoding
from core.serve.prompts import KINDS, prompt

SPEC_GAMMA, SPEC_NEW, CP_RANKS = 8, 64, 8
REPEATED = b"for i in range(10):\n    total += i\n" * 4

TEXT = (b"def serve(request):\n    pages = pool.alloc(request.blocks)\n"
        b"    return engine.prefill(request.prompt)\n")


def _prompt(n: int, salt: bytes) -> bytes:
    return (salt + TEXT * (n // len(TEXT) + 2))[:n]


def prefill_times(repeat: int) -> tuple[float, float, int]:
    model = load_model()
    prompt = _prompt(2048, b"# bench\n")
    prefix = prompt[:1536]
    cold = best_of(lambda: Engine(model, 600, prefix_cache=False).prefill(prompt), repeat)
    reused = []

    def cached() -> float:
        eng = Engine(model, 600)
        eng.prefill(prefix)
        t0 = time.perf_counter()
        r = eng.prefill(prompt)
        reused.append(r.reused_tokens)
        return time.perf_counter() - t0

    cached()  # warm
    warm = min(cached() for _ in range(repeat))
    return cold, warm, reused[-1]


def lookup_time(n_bytes: int = 1_000_000, repeat: int = 3) -> tuple[float, int]:
    model_dims = load_model().dims
    P = 64
    prompt = bytes((i * 7 + i // 64) % 251 for i in range(n_bytes))
    blocks = n_bytes // P
    pool = PagePool(blocks * model_dims.n_mla + 1, P * model_dims.mla_bytes_per_token)
    cache = PrefixCache(pool, model_dims, P)
    hashes = cache.hashes(prompt)
    pages = pool.alloc(PageKind.MLA_KV, blocks * model_dims.n_mla)
    for b, h in enumerate(hashes):
        mine = tuple(pages[b * model_dims.n_mla : (b + 1) * model_dims.n_mla])
        cache.insert_block(h, hashes[b - 1] if b else None, prompt[b * P : (b + 1) * P], mine)
    result = cache.lookup(prompt)
    assert result.stage1_blocks == blocks
    return best_of(lambda: cache.lookup(prompt), repeat), blocks


def spec_rows(repeat: int) -> None:
    model = load_model()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _spec_rows(model, repeat)
    finally:
        torch.set_num_threads(threads)


def _spec_rows(model: HybridLM, repeat: int) -> None:
    for kind, text in (("repeated", REPEATED), *((k, prompt(k)) for k in KINDS)):
        c = compare_decoding(model, text, SPEC_NEW, SPEC_GAMMA, repeat)
        target = "  (target >= 1.5x)" if kind == "repeated" else ""
        print(f"spec {kind:>8}, gamma {SPEC_GAMMA}: plain {c.plain.tokens_per_second:6.1f} B/s, "
              f"speculative {c.spec.tokens_per_second:6.1f} B/s = {c.speedup:4.2f}x{target}; "
              f"acceptance {c.acceptance:.0%}, {c.bytes_per_pass:.2f} B per pass, "
              f"same bytes: {c.same_text}")


def cp_rows(dims: ModelDims) -> None:
    for geo in (toy_cp(dims), k3_cp()):
        v = cp_volume(geo, 100_000, CP_RANKS)
        print(f"cp {geo.name:>4}, P = {CP_RANKS}: KDA all-gather {v.kda / 2**20:8.2f} MiB per "
              f"layer per rank (any T); MLA ring at 100k tokens {v.mla_ring / 2**20:8.2f} MiB; "
              f"crossover {cp_crossover(geo, CP_RANKS):,.0f} tokens per layer, "
              f"{cp_crossover(geo, CP_RANKS, whole_model=True):,.0f} for the whole model")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m core.bench serve", description=__doc__)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    torch.set_num_threads(2)
    cold, warm, reused = prefill_times(a.repeat)
    print(f"prefill 2,048 B cold                      {cold * 1e3:8.1f} ms")
    print(f"prefill 2,048 B, {reused:,} B reused          {warm * 1e3:8.1f} ms  "
          f"(saves {1 - warm / cold:.0%} of cold; target >= 60%)")
    t, blocks = lookup_time(repeat=a.repeat)
    print(f"lookup 1,000,000 B, {blocks:,} cached blocks  {t * 1e3:8.1f} ms  (target <= 50 ms)")
    dims = load_model().dims
    spec_rows(a.repeat)
    cp_rows(dims)
    for g in (toy_geometry(dims), k3_geometry()):
        print(f"{g.name:>4}: {g.tokens_per_page} tokens/page, page {g.page_bytes:,} B; 1k tokens "
              f"-> {g.pages(1000)} pages ({g.mla_pages(1000)} MLA + {g.kda_pages} KDA) = "
              f"{g.pages(1000) * g.page_bytes / 2**20:,.1f} MiB; crossover "
              f"{g.crossover_tokens:,} tokens")
    return 0
