"""The prefix cache's records: a block of MLA pages, a KDA checkpoint group, a lookup result."""

from __future__ import annotations

from dataclasses import dataclass

# Status of a block boundary (stage 2) and the reasons a lookup stops.
READY = "ready"
NO_CHECKPOINT = "no checkpoint"
NOT_READY = "not ready"
PARTIAL = "partial group"
EVICTED = "evicted"
HIT = "hit"
SHORT = "shorter than a block"
MISS = "miss"
LAST_TOKEN = "last token must run"
REASONS = (HIT, SHORT, MISS, NO_CHECKPOINT, NOT_READY, PARTIAL, EVICTED, LAST_TOKEN)


@dataclass(slots=True, kw_only=True)
class BlockEntry:
    """One full block: its bytes (compared on every hit) and one MLA page per MLA layer."""

    digest: bytes
    parent: bytes | None
    tokens: bytes
    pages: tuple[int, ...]
    depth: int  # 1 for the first block of a prompt
    last_used: int = 0
    pins: int = 0
    children: int = 0


@dataclass(slots=True, kw_only=True)
class GroupEntry:
    """The KDA state (S and conv tail) of every KDA layer at the end of block `digest`."""

    digest: bytes
    depth: int
    layers: tuple[tuple[int, ...] | None, ...]  # pages per KDA layer; None: never written
    ready: bool = False
    last_used: int = 0
    pins: int = 0

    @property
    def complete(self) -> bool:
        return all(pages is not None for pages in self.layers)

    @property
    def pages(self) -> list[int]:
        return [p for pages in self.layers if pages is not None for p in pages]


@dataclass(frozen=True, slots=True, kw_only=True)
class LookupResult:
    """What a prompt can reuse, and why it stopped there."""

    prompt_tokens: int
    block_tokens: int
    stage1_blocks: int  # consecutive full blocks whose hash hit and whose bytes matched
    boundary_blocks: int  # the usable boundary: a complete, ready group (0: none)
    reason: str  # one of REASONS: why reuse is not deeper than it is
    boundary_status: tuple[str, ...]  # status of boundaries 1 .. stage1_blocks
    collision: bool = False  # a hash hit whose bytes differed (treated as a miss)

    @property
    def full_blocks(self) -> int:
        return self.prompt_tokens // self.block_tokens

    @property
    def reusable_tokens(self) -> int:
        return self.boundary_blocks * self.block_tokens


@dataclass(frozen=True, slots=True)
class Lease:
    """Pins held by a running request: the reused blocks and the group it resumed from."""

    blocks: tuple[bytes, ...]
    group: bytes | None
