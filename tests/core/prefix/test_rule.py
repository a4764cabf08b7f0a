"""The reuse rule shared by the engine's prefix cache and the fleet simulator."""

from __future__ import annotations

import pytest

from core.dims import k3_group_blocks
from core.errors import ParamError
from core.prefix.rule import usable_blocks


@pytest.mark.parametrize(("matched", "prompt", "every", "want"), [
    (4, 2049, 1, 4),  # 4 blocks matched, a token left over: all 4 reusable
    (4, 2048, 1, 3),  # the prompt is exactly 4 blocks: one token must run, back off to 3
    (5, 5000, 2, 4),  # checkpoints every 2 blocks: round 5 down to 4
    (1, 512, 1, 0),  # a one-block prompt can never reuse its only block
    (0, 9999, 1, 0),
    (3, 100, 1, 0),  # a prompt shorter than a block reuses nothing
])
def test_by_hand(matched, prompt, every, want):
    assert usable_blocks(matched, prompt, 512, every) == want


def test_agrees_with_the_brute_force_definition():
    for matched in range(7):
        for prompt in range(0, 7 * 64 + 3, 5):
            for every in (1, 2, 3):
                ok = [b for b in range(matched + 1) if b % every == 0 and b * 64 < prompt]
                assert usable_blocks(matched, prompt, 64, every) == max(ok, default=0)


def test_k3_group_is_about_31_7_blocks():
    """Reference §1: a K3 group is 31.7x one 512-token block of MLA KV (conv tail included)."""
    assert k3_group_blocks() == pytest.approx(31.7, abs=0.05)


def test_bad_input():
    with pytest.raises(ParamError, match="every"):
        usable_blocks(1, 10, 4, 0)
