"""The reuse rule of a hybrid model, shared by the engine's prefix cache and the fleet simulator.

A prompt can resume after block b only if a KDA checkpoint exists there (groups are kept every
`every` blocks) and at least one prompt token is left to run (its logits are the next token's):

    usable = max { b <= matched : b % every == 0 and b * block_tokens < prompt_tokens }, or 0
"""

from __future__ import annotations

from core.errors import check_int


def usable_blocks(matched: int, prompt_tokens: int, block_tokens: int, every: int = 1) -> int:
    """Blocks of a `matched`-block stage-1 hit that can be reused (stage 2 on a checkpoint grid)."""
    check_int("matched", matched, 0)
    check_int("prompt_tokens", prompt_tokens, 0)
    check_int("block_tokens", block_tokens, 1)
    every = check_int("every", every, 1)
    b = min(matched, (prompt_tokens - 1) // block_tokens) if prompt_tokens else 0
    return b - b % every
