"""slot_stride, the one slot-size rule: hand-worked strides, the aligned-window bound, errors.

Upstream's rule is round_up(payload + 2 x 4096, 4096) (reference section 3): the fixture's
1,632-B expert gets 12,288 B, the real checkpoint's 17,547,264-B expert (4,284 pages) gets two
more pages. Whatever the rule's arithmetic, a slot must hold the aligned window of its expert
at any file offset and keep every slot page aligned; the brute force below checks that with
plain floor and ceil, not the reader's helpers.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from core.errors import ParamError
from core.experts import K3_LAYOUT, ExpertCache, ShardIndex, resolve_expert, slot_stride
from core.experts.reader import plan_reads

PAGE = 4096


@pytest.mark.parametrize(("payload", "stride"), [
    (1_632, 12_288),  # the upstream fixture: 9,824 rounds up to 3 pages
    (1, 12_288),
    (4_096, 12_288),  # exactly 3 pages already
    (4_097, 16_384),
    (13_056, 24_576),  # packed_cols 512: 21,248 rounds up to 6 pages
    (17_547_264, 17_555_456),  # the real expert: 4,284 + 2 pages
])
def test_hand_worked_strides(payload: int, stride: int) -> None:
    assert slot_stride(payload) == stride


@pytest.mark.parametrize("payload", [1, 100, 1_632, 4_095, 4_096, 4_097, 8_191, 13_056])
def test_every_aligned_window_fits_and_slots_stay_aligned(payload: int) -> None:
    """For every start offset within a page, the page-aligned window around the payload fits."""
    stride = slot_stride(payload)
    assert stride % PAGE == 0
    widest = max(
        (math.ceil((off + payload) / PAGE) - math.floor(off / PAGE)) * PAGE
        for off in range(PAGE)
    )
    assert widest <= stride


def test_fixture_plans_fit_the_cache_stride(k3_dir: Path) -> None:
    """Every expert's read plan (unchunked and 4096-chunked) fits the stride the cache uses."""
    index = ShardIndex.open(k3_dir)
    with ExpertCache(index, 1, 24, 4, 5 * 12_288) as c:
        assert c.slot_bytes == slot_stride(1_632) == 12_288
        for e in range(24):
            ref = resolve_expert(index, K3_LAYOUT, 0, e)
            for chunk in (None, 4096):
                assert plan_reads(ref, chunk).footprint <= c.slot_bytes


@pytest.mark.parametrize("payload", [0, -1, 2.5, "4096"])
def test_bad_payload_is_a_param_error(payload: object) -> None:
    with pytest.raises(ParamError, match="payload_bytes"):
        slot_stride(payload)  # type: ignore[arg-type]
