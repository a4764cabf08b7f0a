"""A tab's clamp and draw handlers (tabs/ui_draw.py), the server events behind every control: the
clamp sets what the page must show (its values, maxima, note, preset), the draw draws exactly the
figures the page does not show yet for these values and this presentation mode, in the tab's
order, each PNG equal to a direct render, and never sets a control.

The oracle for "what the page shows" is the sequence of outputs itself: a figure is redrawn
exactly when one of its parameters (or presentation mode) differs from the previous call's."""

from __future__ import annotations

import base64

import gradio as gr
import pytest

import tabs.warm as warm
from tabs.figure import presenting, render_png
from tabs.registry import REGISTRY
from tabs.spec import render
from tabs.ui import build_tab
from tabs.ui_draw import Drawn, TabParts, follows, tab_clamp, tab_draw

pytestmark = pytest.mark.app
PAGING = next(t for t in REGISTRY if t.id == "paging")


def built(tab) -> tuple[TabParts, gr.Checkbox]:
    """tab built as the app builds it, in a Blocks of its own: its parts and the page's
    presentation toggle."""
    with gr.Blocks():
        toggle = gr.Checkbox(False)
        with gr.Tabs(), gr.Tab(tab.title):
            parts = build_tab(tab, toggle).parts
    return parts, toggle


@pytest.fixture(scope="module")
def parts():
    return built(PAGING)[0]


def _call(parts, values: dict, drawn: Drawn, present: bool = False, preset=None, moved=None,
          commit: bool = False):
    tab = parts.tab
    page = [values[c.name] for c in tab.controls]
    extra = [x for x, c in ((preset, parts.preset), (None, parts.measured)) if c is not None]
    first = tab_clamp(parts, moved, commit)(*page, drawn.values, *extra)  # clamped as drawn
    outs = list(tab_draw(parts)(*page, present, drawn, drawn.values))
    plots = {c: name for name, (c, _, _) in parts.figures.items()}
    drawn_figs = list(dict.fromkeys(plots[c] for out in outs[1:] for c in out if c in plots))
    state = next(out[parts.drawn] for out in reversed(outs) if parts.drawn in out)
    return first, drawn_figs, state, outs


def _png(out: dict, parts, name: str) -> bytes:
    plot = out[parts.figures[name][0]]
    return base64.b64decode(plot.plot.split(",", 1)[1])


def test_a_first_draw_draws_every_figure_in_order_each_as_a_direct_render(parts):
    d = PAGING.defaults()
    first, figs, state, outs = _call(parts, d, Drawn())
    assert figs == [f.name for f in PAGING.figures]
    assert first[parts.note] == gr.update(value="", visible=False)
    for out, fig in zip(outs[1:], PAGING.figures, strict=True):
        assert _png(out, parts, fig.name) == render_png(render(fig, PAGING, d).figure)
    # the same values again: nothing to draw
    _, figs, state2, _ = _call(parts, d, state)
    assert figs == [] and state2.figures == state.figures


def test_a_move_redraws_exactly_the_figures_that_read_the_control(parts):
    d = PAGING.defaults()
    _, _, state, _ = _call(parts, d, Drawn())
    for name, value in (("k3_tokens_per_page", 1024), ("dtype", "bfloat16"),
                        ("seq_len", 300)):
        d = {**d, name: value}
        _, figs, state, _ = _call(parts, d, state)
        assert figs == [f.name for f in PAGING.figures if name in f.params], name


def test_presentation_mode_redraws_every_figure_for_a_projector(parts):
    d = PAGING.defaults()
    _, _, state, _ = _call(parts, d, Drawn())
    _, figs, state, outs = _call(parts, d, state, present=True)
    assert figs == [f.name for f in PAGING.figures]
    fig = PAGING.figures[0]
    with presenting(True):
        want = render_png(render(fig, PAGING, d).figure)
    assert _png(outs[1], parts, fig.name) == want


def test_a_typed_value_out_of_range_is_clamped_first_then_drawn_for(parts):
    d = PAGING.defaults()
    _, _, state, _ = _call(parts, d, Drawn())
    c = PAGING.control("seq_len")
    typed = {**d, "seq_len": 10**6}
    step, _, _, _ = _call(parts, typed, state, moved="seq_len")  # typing: the box is left alone
    assert parts.comps["seq_len"] not in step and parts.note not in step
    first, figs, state, outs = _call(parts, typed, state, moved="seq_len", commit=True)
    top = int(c.maximum)
    assert first[parts.comps["seq_len"]]["value"] == top
    want = f"Sequence length: 1000000 is above its maximum {top}"
    assert first[parts.note]["visible"] and want in first[parts.note]["value"]
    fig = PAGING.figures[0]
    assert _png(outs[1], parts, fig.name) == render_png(
        render(fig, PAGING, {**d, "seq_len": top}).figure)


def test_a_page_that_lost_its_state_redraws_everything(parts):
    """A reconnecting page that Gradio gives a fresh state (Drawn()) never draws nothing."""
    d = PAGING.defaults()
    _, _, state, _ = _call(parts, d, Drawn())
    _, figs, _, _ = _call(parts, d, Drawn())
    assert figs == [f.name for f in PAGING.figures]


def test_the_preset_selector_clears_once_the_controls_leave_its_values(parts):
    preset = PAGING.presets[0]
    values = {**PAGING.defaults(), **preset.values}
    first, _, state, _ = _call(parts, values, Drawn(), preset=preset.name)
    assert parts.preset not in first  # the controls hold the preset: it stays
    moved = next(c for c in PAGING.controls if c.name not in preset.values)
    other = next(v for v in (getattr(moved, "demo", None), moved.value) if v != moved.value)
    first, _, _, _ = _call(parts, {**values, moved.name: other}, state, preset=preset.name)
    assert first[parts.preset] == gr.update(value=None) and first[parts.why] == ""


def test_a_figure_waiting_for_its_sweep_says_so_before_it_is_drawn(parts, monkeypatch):
    fig = PAGING.figures[0]
    pending = warm.Warmer("the test sweep", lambda: None, lambda: False, fig.name)
    monkeypatch.setattr(warm, "warmers", lambda: (pending,))
    _, _, _, outs = _call(parts, PAGING.defaults(), Drawn())
    plot, _, title = parts.figures[fig.name]
    assert "Computing the test sweep" in outs[1][title] and plot not in outs[1]
    assert outs[2][title] == f"#### {fig.title}" and plot in outs[2]



def test_the_draw_sets_no_control_and_a_move_s_clamp_only_what_the_move_can_change():
    """The draw streams many outputs, each an update of every output it lists, and the page puts
    a control's stored value back when an update for it arrives: a draw listing the controls
    undid a value typed while it ran (tabs/ui_draw.py). Checked on every tab."""
    for tab in REGISTRY:
        p, toggle = built(tab)
        assert not set(p.draw_outputs()) & set(p.comps.values()), tab.id
        # the clamp's memory is its own: a draw that ran first once made a slider at its
        # maximum look moved to the clamp (prefix, seen in chromium), so it never reads Drawn
        assert p.drawn not in p.clamp_inputs() and p.clamped in p.clamp_outputs(None), tab.id
        # and it is kept on the page, read with the controls by the clamps and the draw
        assert not isinstance(p.clamped, gr.State), tab.id
        assert p.clamped in p.clamp_inputs() and p.clamped in p.draw_inputs(toggle), tab.id
        opened = set(p.clamp_outputs(None)) & set(p.comps.values())
        assert opened == {p.comps[c.name] for c in tab.controls
                          if getattr(c, "max_from", None) or getattr(c, "max_of", None)}, tab.id
        for c in tab.controls:
            set_by_move = set(p.clamp_outputs(c.name)) & set(p.comps.values())
            assert set_by_move == {p.comps[n] for n in follows(tab, c.name)
                                   if n != c.name}, (tab.id, c.name)
            set_by_commit = set(p.clamp_outputs(c.name, commit=True)) & set(p.comps.values())
            assert set_by_commit == {p.comps[n] for n in follows(tab, c.name)}, (tab.id, c.name)


def test_no_clamp_waits_for_the_draw_nor_the_draw_for_a_clamp():
    """Gradio's page sends the events of one (component, event) one after the other, each to
    its end (tabs/ui_wire.py CLAMP_EVENT): a move's clamp listens to another event of the
    control than its draw (a slider's only when other sliders follow it), and a slider's commit
    clamp to its hidden commit box, which the release sets in the browser (no server round
    trip) before the draw. Checked on every tab's dependencies, in the order the page sends
    them."""
    from app import build_app
    from tabs.controls import Slider

    demo = build_app()
    fns = list(demo.fns.values())
    by_name = {f.name: f for f in fns if f.name}
    for tab in REGISTRY:
        if tab.run is not None:
            continue
        draw_fn = by_name[f"{tab.id}_draw"]
        draw = {(b, e) for b, e in draw_fn.targets}
        for c in tab.controls:
            step = by_name.get(f"{tab.id}_clamp_{c.name}")
            led = follows(tab, c.name) != [c.name]
            assert (step is not None) == (led or not isinstance(c, Slider)), (tab.id, c.name)
            clamp = {(b, e) for b, e in step.targets} if step is not None else set()
            assert not clamp & draw, (tab.id, c.name)
            assert {b for b, _ in clamp} <= {b for b, _ in draw}, (tab.id, c.name)
            commit = by_name.get(f"{tab.id}_clamp_{c.name}_commit")
            assert (commit is not None) == isinstance(c, Slider), (tab.id, c.name)
            if commit is None:
                continue
            [(box, event)] = list(commit.targets)
            assert event == "change" and (box, event) not in draw, (tab.id, c.name)
            passes = [f for f in fns if f.fn is None and f.js and
                      [o._id for o in f.outputs] == [box]]
            assert len(passes) == 1, (tab.id, c.name)
            release = set(passes[0].targets)
            assert release and release <= draw and all(e == "release" for _, e in release)
            assert fns.index(passes[0]) < fns.index(draw_fn), (tab.id, c.name)


def test_a_step_never_sets_its_own_slider_and_its_commit_only_a_value_it_clamped():
    """A slider's clamp runs at every step of a drag or keystroke in its box (a slider's
    input): typing "1.5" passes through "1.", which is not a number, and "1000" on a slider
    from 600 passes through 1, so a step leaves the moved slider and the note alone; its
    followers still follow. The release's commit sets the slider only when it clamped the
    value, with the note: a commit that set an allowed value again, answering after the student
    had typed the next one into the same box, put the old one back (chromium, newest_wins)."""
    tab = next(t for t in REGISTRY if t.id == "expert_cache")
    p, _ = built(tab)
    d = tab.defaults()
    last = dict(d)
    for moved, value in (("token", d["token"] - 1), ("slots", d["slots"] + 2), ("token", None),
                         ("token", 999)):
        raw = [value if c.name == moved else d[c.name] for c in tab.controls]
        out = tab_clamp(p, moved)(*raw, last, None)
        assert p.comps[moved] not in out and p.note not in out, (moved, value)
    fewer = d["slots"] - 2
    out = tab_clamp(p, "slots")(*[fewer if c.name == "slots" else d[c.name]
                                  for c in tab.controls], last, None)
    assert out[p.comps["topk"]]["maximum"] == fewer - 1  # top-k at most slots - 1
    typed = [999 if c.name == "token" else d[c.name] for c in tab.controls]
    out = tab_clamp(p, "token", commit=True)(*typed, last, None)
    assert out[p.comps["token"]]["value"] == d["schedule"] and "999" in out[p.note]["value"]
    same = [d[c.name] for c in tab.controls]
    assert p.comps["token"] not in tab_clamp(p, "token", commit=True)(*same, last, None)


def test_follows_finds_the_sliders_whose_maximum_moves_with_a_control():
    """Read off the tabs' specs by hand: a slider follows its max_from source and the controls
    its run length is computed from."""
    tab = {t.id: t for t in REGISTRY}
    assert follows(tab["expert_cache"], "slots") == ["slots", "topk"]
    assert follows(tab["expert_cache"], "schedule") == ["schedule", "token"]
    assert follows(tab["expert_cache"], "seed") == ["seed"]
    assert follows(tab["kda_replay"], "draft_len") == ["draft_len", "accepted"]
    assert follows(tab["engine"], "kind") == ["kind", "step"]
    assert follows(tab["engine"], "ranks") == ["ranks"]
    assert follows(PAGING, "seq_len") == ["seq_len"]


def test_a_commit_reads_the_value_its_release_passed_on():
    """The release passes on the box's text as the student left it, before Gradio's slider
    clamps it to its range on blur (tabs/ui_wire.py PASS_ON), or the slider's number after a
    drag: "99" typed on a 1..8 slider reaches the commit as 99.0, an emptied box as "" (not a
    number, which the clamp says); with nothing readable the commit uses the page's value."""
    from tabs.ui_draw import released

    assert released('["99", 1234.5]', 8) == 99.0
    assert released('["1.25", 1234.5]', 8) == 1.25
    assert released('[7, 1234.5]', 8) == 7
    assert released('["", 1234.5]', 8) == ""
    assert released('[null, 1234.5]', 8) is None
    for broken in (None, "", "not json", "[]", "{}"):
        assert released(broken, 8) == 8, broken


@pytest.mark.parametrize("present", [False, True])
def test_the_view_a_reload_opens_is_the_drawn_values_as_a_link(parts, present):
    """The hidden view box (what a reload of the page opens, assets/lab_head.html) holds the
    values drawn, clamped, and the presentation flag, as a link that parses back to them."""
    from urllib.parse import parse_qsl

    from tabs.share import parse_query

    values = {**PAGING.defaults(), "seq_len": 300, "tokens_per_page": 2000}  # 2000: clamped
    _, _, state, outs = _call(parts, values, Drawn(), present=present)
    back = parse_query(dict(parse_qsl(outs[0][parts.view])))
    assert back.tab.id == "paging" and back.present is present and not back.notes
    assert back.values == state.values
    assert state.values["seq_len"] == 300 and state.values["tokens_per_page"] != 2000


def test_a_step_slider_at_its_end_stays_there_whichever_answer_the_page_has_applied():
    """Prefix, spacing 1 -> 3 moves the step slider's end from 10 to 12. The move's clamp
    answers with step 12 and its record; until the page applies that answer, the next event (the
    release's commit clamp, the draw, a late kick) reads step 10 and the old record, after it
    step 12 and the new one: the page's own record read with the controls (tabs/ui_draw.py).
    Either way the step stays at the end. (A record kept on the server, already at step 12
    while the page still sent step 10, made it step 10 of 12: seen in chromium.)"""
    tab = next(t for t in REGISTRY if t.id == "prefix")
    p, _ = built(tab)
    d = tab.defaults()
    before = {**d, "checkpoint_every": 1, "step": 10}
    after = {**d, "checkpoint_every": 3, "step": 12}
    for page, record in (({**after, "step": 10}, before), (after, after)):
        raw = [page[c.name] for c in tab.controls]
        out = tab_clamp(p, "checkpoint_every", commit=True)(*raw, record, None, None, '["3", 1]')
        assert out[p.clamped]["step"] == 12, page
        outs = list(tab_draw(p)(*raw, False, Drawn(values=after), record))
        assert outs[0][p.drawn].values["step"] == 12, page

