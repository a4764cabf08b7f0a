"""The figure contract: pure, deterministic, style-independent, labelled, and valid API names."""

from __future__ import annotations

import re
import sys
from concurrent.futures import ThreadPoolExecutor

import matplotlib
import pytest

from tabs.figure import FigureResult, render_png
from tabs.registry import REGISTRY, all_figures
from tabs.spec import render

CASES = all_figures()
IDS = [f.name for _, f in CASES]


def clear_lab_caches() -> int:
    """Clear every functools cache in the lab's modules; returns how many were cleared."""
    cleared = 0
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(("core.", "tabs.")):
            continue
        for obj in list(vars(module).values()):
            if callable(getattr(obj, "cache_clear", None)) and hasattr(obj, "cache_info"):
                obj.cache_clear()
                cleared += 1
    return cleared


@pytest.fixture(scope="module")
def rendered() -> dict[str, tuple[FigureResult, bytes]]:
    """Every figure rendered once, serially, from whatever the caches hold: its result and PNG."""
    out = {}
    for tab, fig in CASES:
        result = render(fig, tab)
        out[fig.name] = (result, render_png(result.figure))
    return out


@pytest.fixture(scope="module")
def recomputed(rendered) -> dict[str, bytes]:
    """Every figure rendered again after every engine and figure cache was cleared: each value
    behind these PNGs was computed after all of `rendered` was made. One clear for the whole
    set, not one per figure: a clear per figure made every following render in the worker,
    in this module or any other, recompute its sweeps cold."""
    assert clear_lab_caches() > 0
    return {fig.name: render_png(render(fig, tab).figure) for tab, fig in CASES}


def test_concurrent_renders_equal_serial_ones_and_leave_rcparams_alone(rendered):
    """Gradio renders in worker threads: concurrent renders must not interfere.

    Pins a real bug: per-figure style contexts (rc_context on the global rcParams) entered and
    left by two threads at once leaked the style, and tick density changed with request order.
    """
    before = dict(matplotlib.rcParams)
    with ThreadPoolExecutor(max_workers=4) as pool:
        jobs = [
            (f.name, pool.submit(lambda t=t, f=f: render_png(render(f, t).figure)))
            for t, f in CASES  # 4 threads over 50 figures: every figure overlaps others
        ]
        for name, job in jobs:
            assert job.result() == rendered[name][1], f"{name}: concurrent render differs"
    assert dict(matplotlib.rcParams) == before


@pytest.mark.parametrize(("tab", "fig"), CASES, ids=IDS)
def test_render_is_deterministic(tab, fig, rendered, recomputed):
    """Two renders of the same parameters give identical PNG bytes, the second one computed
    from scratch (every cache cleared after the first), so a cached result can never hide a
    nondeterministic computation."""
    assert recomputed[fig.name] == rendered[fig.name][1]


@pytest.mark.parametrize(("tab", "fig"), CASES, ids=IDS)
def test_axes_are_labelled(tab, fig, rendered):
    """Every visible axes with data has a title (a colorbar a label); metrics are a flat dict."""
    result = rendered[fig.name][0]
    for ax in result.figure.axes:
        if ax.get_label() == "<colorbar>":
            assert ax.get_ylabel() or ax.get_xlabel() or ax.get_title(), f"{fig.name}: colorbar"
        elif ax.get_visible() and ax.axison:
            assert ax.get_title(loc="left") or ax.get_title(), f"{fig.name}: an axes has no title"
    assert result.metrics and all(isinstance(k, str) for k in result.metrics)


def test_registry_names_are_unique_and_stable():
    names = [f.name for _, f in CASES]
    assert len(names) == len(set(names))
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", n) for n in names)
    assert len({t.id for t in REGISTRY}) == len(REGISTRY)
    for tab in REGISTRY:
        assert tab.lesson_path.exists(), f"missing lesson {tab.lesson_path}"
        assert tab.figures, f"tab {tab.id} has no figures"
