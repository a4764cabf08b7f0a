"""Page pool and Prefix cache tabs: the lessons' numbers are the engine's, the default figures
tell the story, and the live timing panel stays out of every baseline.

Pinned: every number in assets/lessons/paging.md is computed here from the K3 ledger; both
lessons stay short (150-250 words); the default presets figure shows every safe path within
the float32 tolerance and the partial group's unsafe path outside it; the live panel has no
baseline, no export and no metrics.
"""

from __future__ import annotations

import re

import pytest

from core.paging.ledger import k3_geometry
from core.tolerances import FP32_DECODE_MAX_ABS
from tabs.paging import TAB as PAGING
from tabs.prefix import TAB as PREFIX
from tabs.registry import all_figures, find_figure
from tabs.spec import render
from tabs.units import MIB
from tests.figures.test_baselines import BASELINE

pytestmark = pytest.mark.figures


def _words(tab) -> int:
    text = tab.lesson().split("\n", 1)[1]  # after the heading
    return len(re.findall(r"[\w'’-]+", text))


@pytest.mark.parametrize("tab", [PAGING, PREFIX], ids=["paging", "prefix"])
def test_lessons_are_short(tab):
    assert 150 <= _words(tab) <= 250


def test_paging_lesson_numbers_are_the_ledgers():
    k3 = k3_geometry(tokens_per_page=int(PAGING.control("k3_tokens_per_page").value))
    text = PAGING.lesson()
    assert f"with {k3.tokens_per_page}-token pages" in text
    assert f"{k3.kda_state_bytes / MIB:g} MiB state needs {k3.kda_pages_per_layer} pages" in text
    assert f"beyond {k3.crossover_tokens:,} tokens" in text
    names = text.replace("bfloat16", "").replace("float32", "").replace("K3", "")  # names
    numbers = set(re.findall(r"\d[\d,]*", names))
    assert numbers == {str(k3.tokens_per_page), f"{k3.kda_state_bytes // MIB}",
                       str(k3.kda_pages_per_layer), f"{k3.crossover_tokens:,}"}


def test_prefix_lesson_has_no_numbers_to_drift():
    names = PREFIX.lesson().replace("Stage 1", "").replace("Stage 2", "")
    assert not re.findall(r"\d", names)


def test_default_presets_show_safe_equal_and_unsafe_diverging():
    tab, fig = find_figure("prefix_presets")
    m = render(fig, tab).metrics
    for p in ("hit", "miss", "fallback", "partial"):
        assert m[f"{p}_safe_within_tol"], p
    assert m["partial_max_abs_unsafe"] > FP32_DECODE_MAX_ABS
    assert m["partial_reused_tokens"] < m["hit_reused_tokens"]


def test_default_pack_round_trip_is_exact():
    tab, fig = find_figure("paging_pack")
    m = render(fig, tab).metrics
    assert m["max_abs_diff"] == 0.0 and m["bit_exact"] and m["no_split_head"]


def test_live_panel_is_never_a_figure():
    live = PREFIX.live
    assert live is not None
    assert live.name not in {f.name for _, f in all_figures()}
    assert not (BASELINE / f"{live.name}.png").exists()
    assert not (BASELINE / f"{live.name}.json").exists()
