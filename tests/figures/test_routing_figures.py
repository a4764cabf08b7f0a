"""Cache-aware routing tab: every figure draws at the extremes of its controls, bad input names
the control, the default figures tell the lesson's story, and the live panel stays off every
baseline.

Pinned: the opening figure shows routing buying hit rate at a quality cost and prefetch
buying hit rate at exactly zero quality cost for more bytes; the rank strip's chosen experts
are select_experts' own, weights summing to 1; the frontier's stock point is the stock arm and
each curve starts at it; agree is exactly 1 - swap at every setting.
"""

from __future__ import annotations

import itertools

import pytest

from core.errors import ParamError
from core.experiments.routing_grid import ALPHAS, CAPACITIES, WINDOWS
from tabs.figure import render_png
from tabs.registry import all_figures
from tabs.routing import TAB
from tabs.spec import render
from tests.figures.test_baselines import BASELINE

pytestmark = pytest.mark.figures

EXTREMES = [
    {"M": WINDOWS[-1], "J": 0, "method": "max_rank", "alpha": ALPHAS[0],
     "capacity": str(CAPACITIES[0]), "disk": "HDD"},
    {"M": WINDOWS[0], "J": 2, "method": "max_rank", "alpha": ALPHAS[-1],
     "capacity": str(CAPACITIES[-1]), "disk": "RAM"},
    {"M": WINDOWS[-1], "J": 1, "method": "cache_prior", "alpha": ALPHAS[0],
     "capacity": str(CAPACITIES[-1]), "disk": "SATA SSD"},
    {"M": WINDOWS[1], "J": 0, "method": "cache_prior", "alpha": 1.0,
     "capacity": str(CAPACITIES[0]), "disk": "NVMe"},
]
FIGS = [f for f in TAB.figures]


@pytest.mark.parametrize(("values", "fig"), list(itertools.product(EXTREMES, FIGS)),
                         ids=[f"{i}-{f.name}" for i, f in itertools.product(range(4), FIGS)])
def test_figures_draw_at_the_extremes(values, fig) -> None:
    result = render(fig, TAB, values)
    assert render_png(result.figure)[:8] == b"\x89PNG\r\n\x1a\n"
    assert result.metrics


@pytest.mark.parametrize(("name", "value", "match"), [
    ("M", 5, r"M must be one of \[2, 4"),
    ("M", 18, r"M must be in \[2, 16\]"),
    ("J", 3, r"J must be in \[0, 2\]"),
    ("method", "topk", "method must be one of"),
    ("alpha", 0.6, r"alpha must be one of \[0.5, 0.75, 1.0\]"),
    ("alpha", 0.25, r"alpha must be in \[0.5, 1.0\]"),
    ("capacity", "48", "capacity must be one of"),
    ("disk", "tape", "disk must be one of"),
])
def test_bad_input_names_the_control(name: str, value: object, match: str) -> None:
    fig = next(f for f in TAB.figures if name in f.params)
    with pytest.raises(ParamError, match=match):
        render(fig, TAB, {name: value})


def test_the_opening_figure_tells_the_story() -> None:
    fig = next(f for f in TAB.figures if f.name == "routing_arms")
    m = render(fig, TAB).metrics
    assert m["routing_hit_rate"] > m["stock_hit_rate"] and m["routing_swap_rate"] > 0
    assert m["routing_delta_nll"] > 0  # routing costs quality at the default setting
    assert m["prefetch_hit_rate"] > m["stock_hit_rate"]
    assert m["prefetch_delta_nll"] == 0.0 and m["prefetch_swap_rate"] == 0.0
    assert m["both_hit_rate"] > max(m["routing_hit_rate"], m["prefetch_hit_rate"])


def test_prefetch_pays_in_bytes() -> None:
    fig = next(f for f in TAB.figures if f.name == "routing_io")
    m = render(fig, TAB).metrics
    assert m["prefetch_mib_per_token"] > m["stock_mib_per_token"]
    assert m["stock_prefetch_io_ms_per_token"] == 0.0 < m["prefetch_prefetch_io_ms_per_token"]


def test_rank_strip_is_select_experts() -> None:
    import torch

    from core.experiments.routing import setting
    from core.routing import select_experts

    fig = next(f for f in TAB.figures if f.name == "routing_rank_strip")
    for values in EXTREMES[:1] + [{}]:
        m = render(fig, TAB, values).metrics
        s = setting(**{p: {**TAB.defaults(), **values}[p] for p in fig.params})
        mo = s.sweep.moment
        sel = select_experts(torch.tensor([mo.scores]), torch.tensor(mo.resident), s.route)
        assert m["chosen"] == ",".join(f"e{int(e)}" for e in sel.ids[0])
        after = [v for key, v in m.items() if key.startswith("weight_after_")]
        assert sum(after) == pytest.approx(1.0, abs=1e-6)
    assert render(fig, TAB).metrics["swaps"] > 0  # the default moment substitutes


def test_frontier_starts_at_stock_and_meters_restate_swap() -> None:
    fig = next(f for f in TAB.figures if f.name == "routing_frontier")
    m = render(fig, TAB).metrics
    assert m["max_rank_J1_M2_hit"] == m["stock_hit"] == m["cache_prior_lam0.00_hit"]
    assert m["max_rank_J1_M2_dnll"] == 0.0
    fig = next(f for f in TAB.figures if f.name == "routing_meters")
    assert render(fig, TAB).metrics["max_abs_agree_minus_one_minus_swap"] == 0.0


def test_live_panel_is_never_a_figure() -> None:
    live = TAB.live
    assert live is not None and live.name not in {f.name for _, f in all_figures()}
    assert not (BASELINE / f"{live.name}.png").exists()


def test_live_panel_measures_and_validates() -> None:
    from tabs.spec import render_live

    text = render_live(TAB.live, TAB, {"disk": "HDD"})
    for arm in ("stock", "routing", "prefetch", "both"):
        assert f"| {arm} |" in text
    assert "HDD" in text and "never on a figure" in text
    with pytest.raises(ParamError, match="disk must be one of"):
        render_live(TAB.live, TAB, {"disk": "tape"})
