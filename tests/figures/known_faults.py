"""Normal-mode figures whose layout has a fault the layout checks (tests/figures/drawn.py) find,
at the settings named: fixing one changes its normal-mode pixels, so each waits for a reviewed
baseline change. Strict: a listed case that passes fails, so the list only shrinks. Presentation
mode has no such list: every figure passes there.

Keyed by (figure, case): "defaults", "preset: <name>" or "heaviest" (tabs.redraw_bench's cases).
"""

from __future__ import annotations

_PRESETS_LINE = "the dashed tolerance line runs through the 'check_groups=False' legend entry"
_ROLLBACK_LINE = "the vertical γ line runs through the left panel's legend entries"
_ROLLBACK_RIGHT = "the right panel's legend sits on the replay line"
_RING_FLUSH = "the dotted flush lines run through the legend entries"
_BOUNDS_LINE = "the vertical L line runs through the right panel's legend entries"
_TRACE_LEGEND = "the framed legend hides the trace's last tokens at the lowest ranks"
_SPREAD_LINE = "the vertical V = 256 line touches the legend entries' right ends"

NORMAL: dict[tuple[str, str], str] = {
    **{("prefix_presets", case): _PRESETS_LINE for case in (
        "defaults", "preset: Evicted checkpoint", "preset: Partial checkpoint",
        "preset: Sparse checkpoints", "preset: Step through a fallback", "heaviest")},
    **{("paging_ledger", case): "the dotted crossover line runs through the legend's KDA entry"
       for case in ("defaults", "heaviest")},
    **{("policy_trace", case): _TRACE_LEGEND for case in (
        "defaults", "preset: Uniform, independent routing", "preset: Skewed routing",
        "preset: Sticky routing", "heaviest")},
    **{("engine_acceptance", case): "the dashed gamma line runs through the 'prose' entry"
       for case in ("defaults", "preset: Records")},
    ("engine_cp", "defaults"): "the dashed P line runs through the 'toy dims' entry",
    **{("kda_replay_rollback", case): _ROLLBACK_LINE for case in (
        "defaults", "preset: Every draft accepted", "preset: Every draft rejected")},
    **{("kda_replay_rollback", case): _ROLLBACK_RIGHT
       for case in ("preset: Long drafts", "heaviest")},
    **{("ring_equivalence", case): _RING_FLUSH for case in (
        "defaults", "preset: Drafts rarely accepted", "preset: Drafts almost always accepted",
        "preset: Small ring, long drafts", "heaviest")},
    **{("ring_bandwidth", case): _RING_FLUSH + "; " + _BOUNDS_LINE for case in (
        "defaults", "preset: Drafts almost always accepted", "preset: Small ring, long drafts")},
    ("ring_bandwidth", "preset: Drafts rarely accepted"): _BOUNDS_LINE,
    ("ring_bandwidth", "heaviest"): _RING_FLUSH,
    **{("fleet_ring_spread", case): _SPREAD_LINE
       for case in ("preset: Many virtual nodes", "heaviest")},
    ("fleet_ring_removal", "heaviest"):
        "'0 routed here' is wider than the removed cluster's dashed bar",
}
