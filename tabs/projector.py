"""Presentation mode as a style layer: what lab_figure (tabs/figure.py) does, under
presenting(), to a figure drawn in its normal words and arrangement.

A figure draws once, one way. Under presenting() lab_figure gives it PRESENT_SCALE x the dpi
(the same pixels, every point-sized text, line and marker PRESENT_SCALE x larger), lays it out
with constrained layout (a figure that places its panels by hand in normal mode, for speed,
does so in normal mode only) and restyles it for a projector:
- words: a text the figure declared a projector form for (Projector.words, or brief() or
  shorten() beside the text) shows that form instead; "" hides it;
- text sizes: titles and emphasis (EMPHASIS_PT or more in normal mode) at PRESENT_TITLE_PT,
  every other text at PRESENT_TEXT_PT: 19-22 CSS px at 980 px wide, >= 14 pt;
- legends: where the figure declares it (Projector.legends), gathered into one legend above
  or below the panels, in as many columns as fit, with short handles;
- arrangement: a figure that needs another arrangement on a projector (a 2 x 2 grid for three
  panels side by side, a label on the other side of its point, more headroom for a legend)
  declares both as data, an Arrangement, and draws with the current mode's (arranged_by);
then, after a first layout: titles and axis labels wrap to their panel, free texts at the
canvas edge, and number-like tick labels that would touch are thinned to every k-th one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Generic, TypeVar
from weakref import WeakKeyDictionary

from matplotlib.artist import Artist
from matplotlib.axis import Axis
from matplotlib.backend_bases import RendererBase
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Text
from matplotlib.ticker import Formatter

PRESENT_SCALE = 1.75
PRESENT_TEXT_PT = 8.0  # 8 pt x 1.75 x 100/72 px at 980/1000 of the width: 19.1 CSS px
PRESENT_TITLE_PT = 9.0
EMPHASIS_PT = 10.0  # normal-mode texts this large (value labels, headings) stay emphasised
TICK_GAP_EM = 0.4  # thinned tick labels keep at least this many ems between them
LEGEND_ROOM = 0.98  # a gathered legend spans at most this fraction of the canvas
# NOTE: a ContextVar, not a global or rcParams: each Gradio worker thread (and each request's
# context) sees its own flag, so one session presenting never enlarges another's figures.
_PRESENTING: ContextVar[bool] = ContextVar("presenting", default=False)
_BRIEF: WeakKeyDictionary[Figure, dict[str, str]] = WeakKeyDictionary()
_SHORTER: WeakKeyDictionary[Figure, list[tuple[Text, str]]] = WeakKeyDictionary()
L = TypeVar("L")  # a figure's layout record
R = TypeVar("R")
_NUMBER_LIKE = re.compile(r"^\S{0,2}[−\-+]?\d[\d.,]*(?:e[−\-+]?\d+)?\s?\S{0,4}$")


@contextmanager
def presenting(on: bool = True) -> Iterator[None]:
    """Within this block, lab_figure draws projector-sized text (same PNG pixel size)."""
    token = _PRESENTING.set(on)
    try:
        yield
    finally:
        _PRESENTING.reset(token)


def is_presenting() -> bool:
    return _PRESENTING.get()


@dataclass(frozen=True)
class Projector:
    """What a figure declares for presentation mode: data, read by the style layer.

    `words` maps a text as drawn in normal mode (a title, label, tick label, legend entry,
    annotation) to what a projector shows instead ("" hides it). `legends`: "keep" leaves
    every legend where the figure put it; "above" or "below" gathers them all into one legend
    there; "hide" drops them (the words name what they keyed); a tuple places each legend
    (axes legends in figure order, then figure legends). `keys` are legend handles (with
    their labels) a gathered legend ends with: what the projector's shorter words no longer
    say on the plot."""

    words: Mapping[str, str] = field(default_factory=dict)
    legends: str | tuple[str, ...] = "keep"
    keys: tuple[Artist, ...] = ()  # entries a gathered legend adds: keys for dropped words


PLAIN = Projector()


@dataclass(frozen=True)
class Arrangement(Generic[L]):
    """Where a figure puts things, in each mode: two records of one kind (card positions, a
    grid shape, an axis's headroom, a label's side), declared beside the figure as data. The
    draw function reads the current mode's record (arranged_by) and never asks the mode.
    For layout only: words go through brief(), text sizes through the style layer."""

    normal: L
    projector: L

    def __post_init__(self) -> None:
        if type(self.normal) is not type(self.projector):
            raise TypeError(f"an Arrangement's two records are of one kind, got "
                            f"{type(self.normal).__name__} and {type(self.projector).__name__}")

    def now(self) -> L:
        """The record for the current mode: the projector's under presenting()."""
        return self.projector if _PRESENTING.get() else self.normal


def arranged_by(arrangement: Arrangement[L]) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Decorate a figure's draw function `fn(*params, lay)`: the decorated function takes the
    params alone and draws with `lay`, `arrangement`'s record for the current mode. The
    arrangement stays readable on it (FigureSpec.arrangement)."""

    def wrap(fn: Callable[..., R]) -> Callable[..., R]:
        @functools.wraps(fn)
        def draw(*args: object, **kwargs: object) -> R:
            return fn(*args, **kwargs, lay=arrangement.now())

        draw.arrangement = arrangement  # type: ignore[attr-defined]
        return draw

    return wrap


def brief(owner: Artist | Figure, normal: str, short: str) -> str:
    """`normal`, noting that a projector shows `short` instead wherever the figure owning
    `owner` draws exactly that text (lab_figure applies it under presenting())."""
    if _PRESENTING.get():
        fig = owner if isinstance(owner, Figure) else owner.get_figure(root=True)
        _BRIEF.setdefault(fig, {})[normal] = short
    return normal


def shorten(text: Text, short: str) -> Text:
    """`text` (an artist just made), noting that a projector shows `short` there instead ("":
    nothing). For a text whose words alone do not single it out (brief() goes by the words)."""
    if _PRESENTING.get():
        _SHORTER.setdefault(text.get_figure(root=True), []).append((text, short))
    return text


def restyle(fig: Figure, look: Projector) -> None:
    """Before the first layout: words, text sizes, legend placement, the grid's own margins
    given over to constrained layout."""
    words = {**look.words, **_BRIEF.pop(fig, {})}
    if words:
        _swap_words(fig, words)
    for text, short in _SHORTER.pop(fig, []):
        text.set_text(short)
    _size_texts(fig)
    _place_legends(fig, look.legends, look.keys)
    for ax in fig.axes:
        if (gs := ax.get_gridspec()) is not None:
            gs.update(left=None, right=None, top=None, bottom=None, wspace=None, hspace=None)


def finish(fig: Figure) -> None:
    """After a first layout: wrap titles, labels and free texts; thin crowded tick labels (the
    layout then runs again)."""
    renderer = fig.canvas.get_renderer()
    _wrap_to_panels(fig, renderer)
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            _thin(axis, renderer)


def _swap_words(fig: Figure, words: Mapping[str, str]) -> None:
    for text in fig.findobj(Text):
        if (new := words.get(text.get_text())) is not None:
            text.set_text(new)
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(_Worded(axis.get_major_formatter(), words))
            axis.set_minor_formatter(_Worded(axis.get_minor_formatter(), words))


def _titles(fig: Figure) -> set[int]:
    """ids of the axes titles (the Texts an axes owns outside ax.texts and its axes) and the
    figure's suptitle."""
    out = {id(t) for ax in fig.axes for t in ax.get_children()
           if isinstance(t, Text) and t not in ax.texts}
    if (sup := getattr(fig, "_suptitle", None)) is not None:
        out.add(id(sup))
    return out


def _size_texts(fig: Figure) -> None:
    titles = _titles(fig)
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_tick_params(which="both", labelsize=PRESENT_TEXT_PT)
    for text in fig.findobj(Text):
        big = id(text) in titles or text.get_fontsize() >= EMPHASIS_PT
        text.set_fontsize(PRESENT_TITLE_PT if big else PRESENT_TEXT_PT)


def _legends(fig: Figure) -> list[Legend]:
    return [lg for ax in fig.axes if (lg := ax.get_legend()) is not None] + list(fig.legends)


def _place_legends(fig: Figure, where: str | tuple[str, ...], keys: tuple[Artist, ...]) -> None:
    legends = _legends(fig)
    places = (where,) * len(legends) if isinstance(where, str) else where
    for lg, p in zip(legends, places, strict=False):
        if p == "hide":
            lg.remove()
    for side in ("above", "below"):
        moved = [lg for lg, p in zip(legends, places, strict=False) if p == side]
        if not moved:
            continue
        handles: list[Artist] = []
        labels: list[str] = []
        titles = [t for lg in moved if (t := lg.get_title().get_text())]
        for lg in moved:
            for handle, text in zip(lg.legend_handles, lg.get_texts(), strict=True):
                label = text.get_text()
                if label and label not in labels:
                    handles.append(handle)
                    labels.append(label)
            lg.remove()
        for key in keys if side == next(p for p in places if p in ("above", "below")) else ():
            handles.append(key)
            labels.append(key.get_label())
        _fit_legend(fig, handles, labels, "; ".join(titles), side)


def _fit_legend(fig: Figure, handles: list[Artist], labels: list[str], title: str,
                side: str) -> None:
    """One figure legend outside the panels, in as many columns as fit the canvas."""
    renderer = fig.canvas.get_renderer()
    loc = "outside upper center" if side == "above" else "outside lower center"
    for ncols in range(len(labels), 0, -1):
        lg = fig.legend(handles, labels, loc=loc, ncols=ncols, handlelength=1.2,
                        handletextpad=0.4, columnspacing=1.0, borderaxespad=0.2,
                        fontsize=PRESENT_TEXT_PT, title=title or None,
                        title_fontsize=PRESENT_TEXT_PT)
        if ncols == 1 or lg.get_window_extent(renderer).width <= LEGEND_ROOM * fig.bbox.width:
            return
        lg.remove()


def _wrap_words(text: Text, room_px: float, renderer: RendererBase) -> None:
    """Break text's lines at spaces so each fits room_px (a single longer word stays whole)."""
    props = text.get_fontproperties()

    def width(s: str) -> float:
        return renderer.get_text_width_height_descent(s, props, ismath=False)[0]

    out: list[str] = []
    for line in text.get_text().split("\n"):
        current = ""
        for word in line.split(" "):
            trial = f"{current} {word}" if current else word
            if current and width(trial) > room_px:
                out.append(current)
                current = word
            else:
                current = trial
        out.append(current)
    text.set_text("\n".join(out))


def _wrap_to_panels(fig: Figure, renderer: RendererBase) -> None:
    """Titles and x labels wrap to their axes' width, y labels to its height; free texts wrap
    at the canvas edge (matplotlib's own wrap)."""
    for ax in fig.axes:
        box = ax.get_position().transformed(fig.transFigure)
        titles = [t for t in ax.get_children() if isinstance(t, Text) and t not in ax.texts]
        for text in (*titles, ax.xaxis.label):
            if text.get_text():
                _wrap_words(text, box.width, renderer)
        if ax.yaxis.label.get_text():
            _wrap_words(ax.yaxis.label, box.height, renderer)
        for text in ax.texts:
            text.set_wrap(True)
    for text in fig.texts:
        text.set_wrap(True)


class _Wrapped(Formatter):
    """Another formatter's labels, changed (subclasses say how); offset text as the other's."""

    def __init__(self, inner: Formatter) -> None:
        self.inner = inner

    def set_axis(self, axis: Axis | None) -> None:
        super().set_axis(axis)
        self.inner.set_axis(axis)

    def set_locs(self, locs) -> None:
        self.inner.set_locs(locs)

    def get_offset(self) -> str:
        return self.inner.get_offset()


class _Worded(_Wrapped):
    """Another formatter's tick labels in a projector's words."""

    def __init__(self, inner: Formatter, words: Mapping[str, str]) -> None:
        super().__init__(inner)
        self.words = words

    def __call__(self, x: float, pos: int | None = None) -> str:
        s = self.inner(x, pos)
        return self.words.get(s, s)

    def format_ticks(self, values) -> list[str]:
        return [self.words.get(s, s) for s in self.inner.format_ticks(values)]


class _Thinned(_Wrapped):
    """Another formatter's labels, every k-th one kept (the ticks all stay)."""

    def __init__(self, inner: Formatter, k: int) -> None:
        super().__init__(inner)
        self.k = k

    def __call__(self, x: float, pos: int | None = None) -> str:
        return self.inner(x, pos) if pos is None or pos % self.k == 0 else ""

    def format_ticks(self, values) -> list[str]:
        return [s if i % self.k == 0 else "" for i, s in enumerate(self.inner.format_ticks(values))]


def _thin(axis: Axis, renderer: RendererBase) -> None:
    """Keep every k-th major tick label of `axis`, the smallest k that leaves TICK_GAP_EM
    between them, when its labels are number-like (a category's name is never dropped)."""
    axis.get_tightbbox(renderer)  # tick labels placed where this layout puts them
    labels = [t.label1 for t in axis.get_major_ticks()
              if t.label1.get_visible() and t.label1.get_text()]
    if len(labels) < 3 or not all(_NUMBER_LIKE.match(t.get_text()) for t in labels):
        return
    boxes = [t.get_window_extent(renderer) for t in labels]
    gap = TICK_GAP_EM * labels[0].get_fontsize() * axis.figure.dpi / 72
    vertical = axis.axis_name == "y"
    lo = [b.y0 if vertical else b.x0 for b in boxes]
    hi = [b.y1 if vertical else b.x1 for b in boxes]
    order = sorted(range(len(boxes)), key=lambda i: lo[i])

    def clear(k: int) -> bool:
        kept = [i for i in order if order.index(i) % k == 0]
        return all(lo[b] - hi[a] >= gap for a, b in zip(kept, kept[1:], strict=False))

    k = next(k for k in range(1, len(labels) + 1) if clear(k))
    if k > 1:
        axis.set_major_formatter(_Thinned(axis.get_major_formatter(), k))
