"""Page pool and Prefix cache tabs: the default figures tell the story, and the live timing
panel stays out of every baseline.

Pinned: the default presets figure shows every safe path within the float32 tolerance and the
partial group's unsafe path outside it; the default pack round trip is bit-exact; the live
panel has no baseline, no export and no metrics. The lessons' numbers and word budgets are
checked by the claim registry (tests/lessons/claims_paging.py, claims_prefix.py).
"""

from __future__ import annotations

import pytest

from core.tolerances import FP32_DECODE_MAX_ABS
from tabs.prefix import TAB as PREFIX
from tabs.registry import all_figures, find_figure
from tabs.spec import render
from tests.figures.test_baselines import BASELINE

pytestmark = pytest.mark.figures


def test_default_presets_show_safe_equal_and_unsafe_diverging():
    from core.experiments.prefix import runs

    tab, fig = find_figure("prefix_presets")
    m = render(fig, tab).metrics
    rs = runs(tab.control("checkpoint_every").value)  # the engine's own runs, not the figure's
    for p in ("hit", "miss", "fallback", "partial"):
        assert rs[p].max_abs_safe <= FP32_DECODE_MAX_ABS, p
        assert m[f"{p}_max_abs_safe"] == ("0" if rs[p].max_abs_safe == 0 else "rounding"), p
    assert rs["miss"].max_abs_safe == 0.0  # nothing reused: the very same computation
    assert rs["partial"].max_abs_unsafe > FP32_DECODE_MAX_ABS
    assert m["partial_max_abs_unsafe"] == f"{rs['partial'].max_abs_unsafe:.1e}"
    assert m["partial_reused_tokens"] < m["hit_reused_tokens"]


def test_default_pack_round_trip_is_exact():
    tab, fig = find_figure("paging_pack")
    m = render(fig, tab).metrics
    assert m["max_abs_diff"] == 0.0 and m["bit_exact"]  # bytes: tests/core/paging/test_walkthrough
    # the verdict drawn agrees with the slots drawn: every head ends on the page it starts on
    offsets = [int(s.split("@")[1]) for s in m["head_slots"].split(",")]
    split = any(off + m["head_bytes"] > m["page_bytes"] for off in offsets)
    assert not split and m["no_split_head"] is (not split)


def test_live_panel_is_never_a_figure():
    live = PREFIX.live
    assert live is not None
    assert live.name not in {f.name for _, f in all_figures()}
    assert not (BASELINE / f"{live.name}.png").exists()
    assert not (BASELINE / f"{live.name}.json").exists()
