"""Step-through figures: the default shows the whole run (the tab opens on its punchline), a
middle step shows part of it and says so, and a step past the run's end shows everything and
says so (never a silent clamp), with that longer title still on the canvas."""

from __future__ import annotations

import pytest

from tabs.figure import render_png
from tabs.registry import REGISTRY
from tabs.spec import render
from tests.figures.drawn import drawn_texts, layout_problems

pytestmark = pytest.mark.figures

STEPPED = {  # tab id -> (step control, the figures it drives, {control: value} that shortens)
    "replay_ring": ("step", ("ring_timeline", "ring_layout"), {"steps": 10}),
    "expert_cache": ("token", ("cache_slot_map", "cache_counters"), {"schedule": 6}),
    "fleet_sim": ("at_s", ("fleet_sim_timeline", "fleet_sim_load"), {}),
    "prefix": ("step", ("prefix_lookup",), {}),
    "engine": ("step", ("engine_timeline",), {}),
    "batching": ("step", ("batching_schedule",), {}),
}
# A step slider whose maximum bounds the run over every setting (its default shows the whole
# run, however long) rather than following one run's length: the middle step to check.
MIDDLE = {"batching": 8}
CASES = [(t, f) for t in REGISTRY if t.id in STEPPED for f in t.figures
         if f.name in STEPPED[t.id][1]]


def _titles(fig) -> str:
    parts = [fig._suptitle.get_text() if fig._suptitle else ""]
    parts += [ax.get_title(loc) for ax in fig.axes for loc in ("left", "center")]
    return " | ".join(parts)


def test_every_step_through_figure_takes_its_control():
    for tab in REGISTRY:
        if tab.id in STEPPED:
            name, figures, _ = STEPPED[tab.id]
            assert {f.name for f in tab.figures if name in f.params} == set(figures), tab.id


@pytest.mark.parametrize(("tab", "fig"), CASES, ids=[f.name for _, f in CASES])
def test_default_whole_middle_part_past_the_end_all(tab, fig, monkeypatch):
    name, _, shorter = STEPPED[tab.id]
    c = tab.control(name)
    whole = render(fig, tab)
    assert whole.metrics["complete"] is True
    middle_value = MIDDLE.get(tab.id, int(c.minimum + (c.value - c.minimum) // 3))
    middle = render(fig, tab, {name: middle_value})
    assert middle.metrics["complete"] is False
    assert render_png(middle.figure) != render_png(whole.figure)
    titles = _titles(middle.figure)
    assert ": all" not in titles and "whole run" not in titles, titles
    assert " of " in titles or "up to" in titles, titles
    past = render(fig, tab, {**shorter, name: int(c.maximum)})
    assert past.metrics["complete"] is True
    t = _titles(past.figure)
    assert ": all" in t or "whole run" in t or "asked for" in t, t
    with drawn_texts(monkeypatch, past.figure) as drawn:  # the longest title still fits
        render_png(past.figure)
    problems = layout_problems(past.figure, drawn)
    assert not problems, problems
