"""The Page pool tab's engine runs, cached per parameter set (pure functions of their keys)."""

from __future__ import annotations

import threading
from functools import lru_cache

from core.model.model import DecodeState
from core.paging.ledger import toy_geometry
from core.paging.walkthrough import (
    PackRoundTrip,
    PageGrowth,
    StoredSequence,
    kda_states,
    pack_roundtrip,
    page_growth,
    prefill_state,
    store_in_pages,
)
from core.serve.scenarios import CACHED, OTHER
from tabs.model.common import dims, model

__all__ = ["MAX_TOKENS", "POOL_PAGES", "TEXT", "dims", "growth", "roundtrip", "state", "stored"]

MAX_TOKENS = 1024  # the hero's range: sequence lengths 1..MAX_TOKENS
POOL_PAGES = 128  # one pool for every figure: it holds MAX_TOKENS at the smallest page size
TEXT = (CACHED + OTHER)[:MAX_TOKENS]  # the lab's sample prompts, one after the other


@lru_cache(maxsize=16)
def growth(tokens_per_page: int) -> PageGrowth:
    return page_growth(dims(), tokens_per_page, MAX_TOKENS, POOL_PAGES)


# NOTE: two figures redraw at once after a hero move; the lock makes the second wait for the
# first's prefill instead of repeating it on the other core.
_PREFILL_LOCK = threading.Lock()


def state(seq_len: int) -> DecodeState:
    """Read-only: the model's state after prefilling the first seq_len bytes of TEXT."""
    with _PREFILL_LOCK:
        return _state(seq_len)


@lru_cache(maxsize=32)
def _state(seq_len: int) -> DecodeState:
    return prefill_state(model(), TEXT[:seq_len])


@lru_cache(maxsize=32)
def stored(seq_len: int, tokens_per_page: int) -> StoredSequence:
    return store_in_pages(dims(), state(seq_len), tokens_per_page, POOL_PAGES)


@lru_cache(maxsize=32)
def roundtrip(seq_len: int, tokens_per_page: int, dtype: str) -> PackRoundTrip:
    page_bytes = toy_geometry(dims(), tokens_per_page).page_bytes
    return pack_roundtrip(kda_states(state(seq_len)), page_bytes, dtype)
