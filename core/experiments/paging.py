"""The Page pool tab's experiment: the shipped model's state stored in one page pool, cached per
parameter set (single-flight: figures redrawn at once share one prefill). Read-only results.

  TEXT                               the lab's sample prompts, one after the other (CACHED then
                                     OTHER of core.experiments.scenes), MAX_TOKENS bytes
  growth(tokens_per_page)            PageGrowth: pages per kind at every length 0..MAX_TOKENS
  state(seq_len)                     the model's DecodeState after prefilling TEXT[:seq_len]
  stored(seq_len, tokens_per_page)   StoredSequence: that state written into a POOL_PAGES pool
                                     and read back
  roundtrip(seq_len, tokens_per_page, dtype)   PackRoundTrip of its KDA states into pages of
                                     that size
"""

from __future__ import annotations

from core.experiments.flight import single_flight
from core.experiments.scenes import CACHED, MAX_TOKENS, OTHER, POOL_PAGES
from core.experiments.shipped import model
from core.model.manifest import shipped_dims
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

TEXT = (CACHED + OTHER)[:MAX_TOKENS]


@single_flight(16)
def growth(tokens_per_page: int) -> PageGrowth:
    return page_growth(shipped_dims(), tokens_per_page, MAX_TOKENS, POOL_PAGES)


@single_flight(32)
def state(seq_len: int) -> DecodeState:
    return prefill_state(model(), TEXT[:seq_len])


@single_flight(32)
def stored(seq_len: int, tokens_per_page: int) -> StoredSequence:
    return store_in_pages(shipped_dims(), state(seq_len), tokens_per_page, POOL_PAGES)


@single_flight(32)
def roundtrip(seq_len: int, tokens_per_page: int, dtype: str) -> PackRoundTrip:
    page_bytes = toy_geometry(shipped_dims(), tokens_per_page).page_bytes
    return pack_roundtrip(kda_states(state(seq_len)), page_bytes, dtype)
