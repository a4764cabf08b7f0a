"""tabs/load_bench.py's reading of which calls waited for a render, from the clients' clocks."""

from __future__ import annotations

from tabs.load_bench import waited_for_a_render

A, B = ("fig_a", [1]), ("fig_b", [2])


def test_first_call_renders_an_overlapping_one_joins_a_later_one_hits():
    plans = [[A, B], [A, A], [B]]
    runs = [([1.0, 0.5], [], [10.0, 11.0]),   # A renders 10-11; B starts 11.0
            ([0.2, 0.1], [], [10.5, 12.0]),   # A at 10.5 joins the render; at 12 a hit
            ([0.3], [], [10.9])]              # B at 10.9 is B's first: it renders (to 11.2)
    assert waited_for_a_render(plans, runs) == [[True, True], [True, False], [True]]


def test_same_figure_other_values_is_another_render():
    plans = [[A], [("fig_a", [3])]]
    runs = [([1.0], [], [0.0]), ([1.0], [], [5.0])]
    assert waited_for_a_render(plans, runs) == [[True], [True]]
