"""The Batching tab's requests and the bounds of its controls, torch-free: the tab declares its
controls with them before torch loads. tests/core/experiments/test_batching.py checks every
bound against the engine (pages from the page pool's own arithmetic, the longest run by
running it).

ARRIVALS  six requests, cut from the held-out prompts (core.serve.prompts.held_out), arriving
          in this order: short and long prompts (a long one needs several prefill chunks at a
          small chunk or budget), lengths that cross a 64-token page boundary while decoding
          (so a tight pool runs dry mid-run), one speculative request (gamma 4: verify
          windows), the rest plain greedy.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from core.serve.prompts import held_out

N_SOURCES = 16  # the prompts are cut from held_out(N_SOURCES)


@dataclass(frozen=True, slots=True, kw_only=True)
class Arrival:
    source: int  # index into held_out(N_SOURCES)
    length: int  # prompt bytes: the first `length` bytes of that prompt
    n_new: int  # bytes to generate
    draft_len: int  # gamma: 0 plain greedy, > 0 speculative (verify windows)


ARRIVALS = (
    Arrival(source=4, length=56, n_new=12, draft_len=0),  # arithmetic lines; 68 tokens at the end
    Arrival(source=1, length=160, n_new=12, draft_len=0),  # code: the long prompt
    Arrival(source=3, length=80, n_new=12, draft_len=4),  # JSON records: drafts from itself
    Arrival(source=5, length=120, n_new=12, draft_len=0),  # code; 132 tokens at the end
    Arrival(source=12, length=60, n_new=12, draft_len=0),  # arithmetic; 72 tokens at the end
    Arrival(source=0, length=24, n_new=12, draft_len=0),  # arithmetic, short
)

MAX_BATCH = len(ARRIVALS)  # a larger batch runs the same schedule
BUDGETS = (64, 512)  # token budget slider: [min, max], steps of 64
CHUNKS = (64, 256)  # prefill chunk slider: [min, max], steps of 64
MAX_SPACING = 6  # arrival spacing slider: 0..MAX_SPACING steps
POOL_MIN = 24  # pages: the largest request alone (its KDA state and its MLA pages)
POOL_MAX = 144  # pages: every request at once, with room to spare
POOL_STEP = 2  # one MLA page per MLA layer: the pages one 64-token block takes
MAX_STEPS = 96  # the step slider's maximum: the longest run of any setting of the controls


@functools.cache
def prompts() -> tuple[bytes, ...]:
    """The arrivals' prompts, in arrival order."""
    src = held_out(N_SOURCES)
    return tuple(src[a.source][: a.length] for a in ARRIVALS)
