"""`python -m core.bench model`: decode and prefill throughput of the tiny hybrid model.

decode   greedy steps, batch 1: every expert resident vs streamed through an ExpertCache that
         holds a quarter of the experts (n_layers * n_experts / 4 slots), counters printed
prefill  one forward over T tokens with kda_chunked vs T token-by-token steps (kda_step)
Times are best-of (core.bench.timing.best_of) on the shipped weights, 2 threads.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import torch

from core.bench.timing import best_of
from core.model.providers import CacheProvider, open_cache
from core.model.weights import ASSET_DIR, load_model

PROMPT = b'{"id": 12, "name": "alice", "city": "oslo"}\n31 + 4 = 35\n'


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    decode_resident: float  # tokens / s
    decode_cached: float
    cache_slots: int
    cache_hit_rate: float
    prefill_chunked: float
    prefill_stepwise: float
    prefill_tokens: int


def _decode(model, n: int, provider=None) -> None:
    model.generate(PROMPT, n, provider)


@torch.no_grad()
def run(n_decode: int = 64, n_prefill: int = 256, repeat: int = 3) -> Result:
    torch.set_num_threads(2)
    model = load_model()
    d = model.dims
    slots = d.n_layers * d.n_experts // 4
    t_res = best_of(lambda: _decode(model, n_decode), repeat)
    with open_cache(ASSET_DIR, d, slots) as cache:
        provider = CacheProvider(cache)
        _decode(model, n_decode, provider)  # warm the oneDNN shapes, not the cache
        cache.reset_stats()
        t_cache = best_of(lambda: _decode(model, n_decode, provider), repeat, warmup=0)
        stats = cache.stats()
    hit_rate = stats.hits_resident / max(1, stats.demand_requests)
    idx = torch.randint(0, 256, (1, n_prefill), generator=torch.Generator().manual_seed(0))

    def stepwise() -> None:
        s = model.new_state(1)
        for t in range(n_prefill):
            model.step(idx[:, t], s)

    t_chunk = best_of(lambda: model(idx, model.new_state(1)), repeat)
    t_step = best_of(stepwise, repeat)
    return Result(decode_resident=n_decode / t_res, decode_cached=n_decode / t_cache,
                  cache_slots=slots, cache_hit_rate=hit_rate, prefill_chunked=n_prefill / t_chunk,
                  prefill_stepwise=n_prefill / t_step, prefill_tokens=n_prefill)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m core.bench model", description=__doc__)
    p.add_argument("--decode", type=int, default=64, help="tokens generated per decode run")
    p.add_argument("--prefill", type=int, default=256, help="prompt tokens per prefill run")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    r = run(a.decode, a.prefill, a.repeat)
    print(f"decode  all experts resident        {r.decode_resident:8.1f} tok/s")
    print(f"decode  ExpertCache, {r.cache_slots:3d} slots (1/4) {r.decode_cached:8.1f} tok/s "
          f"(resident hit rate {r.cache_hit_rate:.1%})")
    print(f"prefill chunked KDA, T={r.prefill_tokens:<4d}        {r.prefill_chunked:8.1f} tok/s")
    print(f"prefill token by token, T={r.prefill_tokens:<4d}     {r.prefill_stepwise:8.1f} tok/s "
          f"({r.prefill_chunked / r.prefill_stepwise:.1f}x slower)")
    return 0
