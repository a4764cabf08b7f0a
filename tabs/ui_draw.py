"""Figures to the browser: the PNG data (with alt text) gr.Plot serves, a figure's API handler,
and the two handlers behind every control of a tab: its clamp and its draw.

Both run when the tab opens, when a student moves one of its controls (a slider's release, a
choice's or check's input), when a preset or Reset sets them, when a shared link restores them
and when presentation mode changes (tabs/ui_wire.py):
  1. the clamp (`tab_clamp`, quick unqueued events: a slider's commit on its release, a
     step's for the sliders that follow a moved control, one for the tab's open)
     clamps the page's values (tabs/clamp.py) and sets the sliders it changed, the linked
     maxima and the note; clears the preset selector when the controls no longer hold its
     values; marks the live panel stale when its settings moved. It answers once, and its
     outputs are only the controls the move can change (TabParts.clamp_outputs): a step's,
     the sliders whose maximum follows the moved control; a commit's, the released slider
     too, read as its release passed it on, before Gradio's slider clamped it to its range on
     blur (so the note can name the value typed); on the tab's open, only the
     sliders that follow another.
     What it last set (`clamped`) is kept on the page, in a hidden box its answer sets with
     the controls, never on the server: the events of one move answer in either order, and
     the page applies an answer after the next event may have read the controls, so a record
     kept on the server ran ahead of the values the page sent with it, and a slider the clamp
     had just moved to its new end, read still at its old end, was taken for one the student
     had moved there (prefix, spacing 1 -> 3: the lookup drawn at step 10 of 12; seen in
     chromium, ~1 move in 4 under load). Read with the controls, the record is the page's
     own, of the same moment;
  2. the draw (`tab_draw`) clamps the same inputs against the same record and draws, in the
     tab's figure order (the figure the hero moves most first), every figure whose parameters
     or presentation mode differ from what this session's page last got, each shown as soon
     as it is drawn, from the shared render cache (tabs/render_cache.py). It never sets a
     control.
The split is what keeps a value a student types while a draw runs: Gradio's page refreshes the
props of an event's outputs (their loading state at least) as the event streams, and its slider,
when its props are refreshed, puts back the value the page's store holds for it, which lags a
value being typed. A draw that listed the controls as outputs so put back, a few milliseconds
after it was typed, the old value of a box the student had just typed into (caught in chromium
by hooking the box's value setter: tests/e2e/test_newest_wins.py lost ~1 move in 20 under load).
Gradio runs the draw with trigger_mode="always_last": while one draw of a session's tab runs,
further triggers wait, and only the last of them runs after it, reading the values the page
shows then. So a session's draws of a tab never overlap and the newest values always draw last.
What the page last got lives in the tab's gr.State (`Drawn`), per session: a page that lost
its state (a new session, a reconnect that Gradio treats as one) redraws everything.
"""

# No `from __future__ import annotations` here: Gradio evaluates every event handler's type
# hints when the app is built, and string annotations made that ~0.1 s of startup.

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

import gradio as gr
from gradio.components.plot import PlotData
from matplotlib.figure import Figure

from core.errors import ParamError
from tabs import warm
from tabs.alt import alt_text
from tabs.clamp import clamp_tab, same_value
from tabs.controls import Slider
from tabs.figure import FigureResult, lab_figure, render_png
from tabs.render_cache import Rendered, key, rendered
from tabs.spec import FigureSpec, TabSpec, run_params

log = logging.getLogger("serving_lab")


class AltPlotData(PlotData):
    """PlotData that carries the figure's alt text. Gradio's matplotlib view writes the field
    `chart` into the img's alt (followed by " plot visualising provided data", which the page's
    script drops: assets/lab_head.html)."""

    chart: str = ""


def plot_data(figure: Figure, alt: str = "") -> PlotData:
    """What gr.Plot(format="png") serves for a matplotlib figure, drawn by render_png under the
    lab's draw lock (gr.Plot's own savefig would draw outside it)."""
    import base64

    png = base64.b64encode(render_png(figure)).decode("ascii")
    return AltPlotData(type="matplotlib", plot=f"data:image/png;base64,{png}", chart=alt)


def served(r: Rendered) -> PlotData:
    return AltPlotData(type="matplotlib", plot=r.plot, chart=r.alt)


def served_result(fig: FigureSpec, result: FigureResult) -> PlotData:
    """A figure drawn outside the render cache (the Serve tab's streamed snapshots)."""
    return plot_data(result.figure, alt_text(fig.title, result.metrics))


def error_figure(fig: FigureSpec, err: Exception) -> Figure:
    """What a figure that failed to draw shows in its own place (the rest of the tab lives)."""
    with lab_figure(1.6) as f:
        ax = f.add_subplot()
        ax.set_axis_off()
        ax.text(0, 0.5, f"This figure could not be drawn for these settings:\n"
                f"{type(err).__name__}: {str(err)[:200]}\nThe other figures are unaffected.",
                transform=ax.transAxes, va="center", fontsize=11, color="#B00020")
        ax.set_title(fig.title, loc="left")
    return f


def failed(fig: FigureSpec, err: Exception, values: object) -> tuple[PlotData, str]:
    log.exception("figure %s failed for %s", fig.name, values)
    alt = f"{fig.title}. Not drawn: {type(err).__name__}."
    return plot_data(error_figure(fig, err), alt), f"**Not drawn:** {type(err).__name__}: {err}"


def api_handler(fig: FigureSpec, tab: TabSpec):
    """The figure's API endpoint: (plot, metrics table); a bad value is a gr.Error naming it.
    API calls draw as the baselines pin (presentation mode is the page's)."""
    def handle(*values: object):
        params = dict(zip(fig.params, values, strict=True))
        try:
            r = rendered(fig, tab, params)
        except ParamError as e:
            raise gr.Error(str(e)) from None
        except Exception as e:  # a bug in one figure must not take the tab down
            return failed(fig, e, values)
        return served(r), r.table

    handle.__name__ = fig.name
    return handle


def title_markdown(fig: FigureSpec, stale: str = "", computing: str = "") -> str:
    """The figure's heading; while the figure is stale, a visible line saying so and why; while
    it waits for the warm-up's sweep (tabs/warm.py), a line saying what is being computed."""
    head = f"#### {fig.title}"
    if stale:
        return (f"{head}\n\n<span class='stale-note'>⚠ Stale: this figure still shows the "
                f"previous settings; it could not be redrawn ({stale}).</span>")
    if computing:
        return (f"{head}\n\n<span class='computing-note'>Computing {computing}, once for "
                f"this server: the figure appears in a few seconds.</span>")
    return head


@dataclass(frozen=True, slots=True, kw_only=True)
class Drawn:
    """What a session's page shows of one tab: the values it last drew for, and per figure the
    render-cache key its image was drawn for."""

    values: dict[str, object] | None = None
    figures: dict[str, tuple] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class TabParts:
    """A built tab's components that its draw reads and sets."""

    tab: TabSpec
    comps: dict[str, gr.components.Component]  # in control order
    figures: dict[str, tuple[gr.Plot, gr.Markdown, gr.Markdown]]  # plot, metrics, title
    note: gr.Markdown  # the clamp note under the controls
    drawn: gr.State  # Drawn
    clamped: gr.JSON  # the values the tab's clamp last set, as the page holds them (None first)
    view: gr.Textbox  # the drawn view as a link's query: what a reload opens (lab_head.html)
    preset: gr.Dropdown | None = None
    why: gr.Markdown | None = None
    run_text: gr.Markdown | None = None
    stale: gr.Markdown | None = None  # the live panel's "the controls moved" note
    measured: gr.State | None = None  # the values the live panel was measured for
    commits: dict[str, gr.Textbox] = field(default_factory=dict)  # per slider (ui_wire.py)
    fixed: dict[str, object] = field(default_factory=dict)  # the class room's values

    def clamp_inputs(self) -> list:
        extra = [self.preset, self.measured]
        return [*self.comps.values(), self.clamped, *(c for c in extra if c is not None)]

    def clamp_outputs(self, moved: str | None, commit: bool = False) -> list:
        """What a clamp may set (module docstring, step 1). None (the tab's open): only
        the sliders whose maximum follows other controls; every other value the page can hold
        then was set by a preset, Reset, a validated link or its own clamp. A move's clamp
        (`commit` False: a slider's every step, a choice's or check's change): the controls
        whose maximum follows `moved`, never `moved` itself. A slider's commit clamp (its
        release): `moved` and those, `moved` set only when its value had to be clamped (an
        allowed value set again, answering after the student had typed the next one into the
        same box, put the old one back). Only the note shows the clamps' progress
        (tabs/ui_wire.py): a control whose loading state an event refreshed put back the value
        the page's store held for it, which lags a value being typed."""
        if moved is None:
            names = [c.name for c in self.tab.controls if _follower(c)]
        else:
            names = [n for n in follows(self.tab, moved) if commit or n != moved]
        noted = moved is None or commit or not isinstance(self.tab.control(moved), Slider)
        extra = [self.preset, self.why, self.stale]
        return [*(self.comps[n] for n in names), *([self.note] if noted else []), self.clamped,
                *(c for c in extra if c is not None)]

    def draw_inputs(self, present: gr.Checkbox) -> list:
        return [*self.comps.values(), present, self.drawn, self.clamped]

    def draw_outputs(self) -> list:
        return [*(x for f in self.figures.values() for x in f), self.drawn, self.view,
                *([self.run_text] if self.run_text is not None else [])]


def _follower(c: object) -> bool:
    return isinstance(c, Slider) and bool(c.max_from or c.max_of)


def follows(tab: TabSpec, name: str) -> list[str]:
    """`name` and every slider whose maximum follows it, directly or through another one: the
    controls a move of `name` can change."""
    names = {name}
    grew = True
    while grew:
        grew = False
        for c in tab.controls:
            if isinstance(c, Slider) and c.name not in names and (
                    c.max_from in names or names.intersection(c.max_params)):
                names.add(c.name)
                grew = True
    return [c.name for c in tab.controls if c.name in names]


def released(passed: object, page: object) -> object:
    """The value a slider's release passed on (tabs/ui_wire.py PASS_ON: JSON [value, time];
    the value as its box held it, a string, or the slider's number), a number when it reads as
    one; the page's value when nothing can be read."""
    try:
        value = json.loads(passed)[0]  # type: ignore[arg-type]
    except (TypeError, ValueError, IndexError, KeyError):
        return page
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value  # not a number: the clamp says so
    return value


def tab_clamp(parts: TabParts, moved: str | None, commit: bool = False):
    """The clamp handler (module docstring, step 1) for a move of `moved` (None: the tab's
    select; `commit`: a slider's release): an {output: update} dict for the controls it
    set, the note, the preset selector and the live panel's stale note, as far as
    TabParts.clamp_outputs lets this clamp set them."""
    tab = parts.tab
    names = list(parts.comps)
    by_name = {p.name: p for p in tab.presets}
    outputs = set(parts.clamp_outputs(moved, commit))

    def handle(*inputs: object) -> dict:
        raw = dict(zip(names, inputs, strict=False))
        last, *extra = inputs[len(names):]
        preset_name = extra.pop(0) if parts.preset is not None else None
        measured = extra.pop(0) if parts.measured is not None else None
        if commit and extra:
            raw[moved] = released(extra.pop(0), raw[moved])
        if isinstance(last, dict) and (
                all(same_value(raw[n], last.get(n)) for n in names) if moved is None else
                not commit and same_value(raw[moved], last.get(moved))):
            # nothing moved since the record: set together with these values (a preset,
            # Reset), or read before they were applied; either way nothing to clamp
            return {parts.clamped: gr.skip()}
        c = clamp_tab(tab, raw, last if isinstance(last, dict) else None)
        out: dict = {parts.note: gr.update(value=c.note, visible=bool(c.note)),
                     parts.clamped: dict(c.values)}
        for name in c.changed | (set(c.maxima) - {moved}):  # its own maximum it cannot move
            ctl = tab.control(name)
            up = {"value": c.values[name]}
            if isinstance(ctl, Slider) and name in c.maxima:
                up["maximum"] = c.maxima[name]
            out[parts.comps[name]] = gr.update(**up)
        if parts.preset is not None and isinstance(preset_name, str):
            chosen = by_name.get(preset_name)
            if chosen is None or any(c.values[k] != v for k, v in chosen.values.items()) or any(
                    c.values[x.name] != x.value for x in tab.controls
                    if x.name not in chosen.values):
                out[parts.preset] = gr.update(value=None)
                out[parts.why] = ""
        if parts.stale is not None and tab.live is not None:
            moved_live = isinstance(measured, dict) and any(
                measured.get(p) != c.values[p] for p in tab.live.params)
            out[parts.stale] = gr.update(visible=moved_live)
        return {k: v for k, v in out.items() if k in outputs}

    handle.__name__ = f"{tab.id}_clamp" + (f"_{moved}" if moved else "") + (
        "_commit" if commit else "")
    return handle


def tab_draw(parts: TabParts):
    """The tab's draw handler (module docstring, step 2): a generator of {component: update}
    dicts. It clamps the page's values as the clamp handler does, from the same inputs, and
    draws for the clamped values; it never sets a control (see the module docstring)."""
    from tabs.share import PRESENT_KEY, link_query  # share reads the registry: built by now

    tab = parts.tab
    names = list(parts.comps)

    def handle(*inputs: object) -> Iterator[dict]:
        raw = dict(zip(names, inputs, strict=False))
        present, drawn, clamped = inputs[len(names):len(names) + 3]
        last = drawn if isinstance(drawn, Drawn) else Drawn()
        c = clamp_tab(tab, raw, clamped if isinstance(clamped, dict) else None)
        now = Drawn(values=dict(c.values), figures=dict(last.figures))
        view = link_query(tab, c.values) + (f"&{PRESENT_KEY}=1" if present else "")
        first: dict = {parts.drawn: now, parts.view: view}
        if tab.run is not None and parts.run_text is not None:
            params = run_params(tab, c.values)
            if last.values is None or run_params(tab, last.values) != params:
                first[parts.run_text] = tab.run.text(tab.run.final(**params))
        yield first
        # Every later output repeats the images already drawn: Gradio streams a generator's
        # outputs as diffs against its previous output, and its page applies a diff in place,
        # to the very object the plot shows, so a plot going back to "no change" would have its
        # image deleted from under it (seen in chromium when cached figures came fast).
        shown: dict = {}
        for fig in tab.figures:
            k = key(fig, {p: c.values[p] for p in fig.params}, bool(present))
            if last.figures.get(fig.name) == k:
                continue
            plot, table, title = parts.figures[fig.name]
            slow = warm.waiting(fig.name)
            if slow is not None:  # the warm-up's sweep: say why it takes seconds
                yield {**shown, title: title_markdown(fig, computing=slow.what)}
            try:
                r = rendered(fig, tab, c.values, bool(present))
            except ParamError as e:  # cannot happen after the clamp; never a crash if it does
                shown[title] = title_markdown(fig, str(e))
                yield dict(shown)
                continue
            except Exception as e:  # a bug in one figure must not take the tab down
                img, text = failed(fig, e, c.values)
                shown |= {plot: img, table: text, title: title_markdown(fig)}
                yield dict(shown)
                continue
            now = Drawn(values=now.values, figures={**now.figures, fig.name: k})
            shown |= {plot: served(r), table: r.table, title: title_markdown(fig)}
            yield {**shown, parts.drawn: now}

    handle.__name__ = f"{tab.id}_draw"
    return handle
