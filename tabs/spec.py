"""Declarative tab and figure specs: what a tab shows, with which controls, under which API name."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from tabs.controls import Control, Slider, validate_all
from tabs.figure import FigureResult
from tabs.lazy import lazy

LESSONS = Path(__file__).resolve().parent.parent / "assets" / "lessons"


@dataclass(frozen=True)
class FigureSpec:
    """One figure: `fn(**params)` is pure; `name` is its api_name, baseline and export file name.
    `fn` may be given as "module:attribute", imported on its first call (tabs/lazy.py)."""

    name: str
    title: str
    fn: Callable[..., FigureResult]
    params: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "fn", lazy(self.fn))


# A measurement's progress: (rounds done, rounds in all, what a round times).
Progress = Callable[[int, int, str], None]


def no_progress(done: int, total: int, what: str) -> None:
    """Progress reported to no one (API calls, tests)."""


@dataclass(frozen=True)
class LiveSpec:
    """Live text beside the figures: `fn(**params, progress=report)` returns Markdown measured
    at call time (e.g. wall-clock timings), calling `report` (a Progress) as its rounds go.
    Measured only when asked (a button on the page, or its API endpoint): times take seconds
    and depend on what else the machine runs. Never a figure: not baselined, exported or in
    golden metrics; `name` is its api_name. `fn` may be a lazy name, as FigureSpec's."""

    name: str
    title: str
    fn: Callable[..., str]
    params: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "fn", lazy(self.fn))


@dataclass(frozen=True)
class Preset:
    """A named scenario: one click sets these controls (the rest to defaults) and redraws.
    `why` is the one line a student reads beside it: what to look for."""

    name: str
    why: str
    values: Mapping[str, object]


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    """A streamed run behind a button (the Serve tab).

    `session()` makes one browser session's state (kept per session, released by `close` when
    the session ends or idles); `start(session, **params)` returns an iterator of snapshots,
    validated before any work. Each snapshot fills the output panel (`text`), every figure of
    the tab through `draws[figure name](snapshot)` and the live panel (`live`: measured times,
    never on a figure). The tab's figures are FigureSpecs as everywhere: `fn(**params)` draws
    the last snapshot of a fresh session's run, which is what the tab shows before any click
    and what the baselines pin. Controls redraw nothing by themselves; the button does.
    Every function here may be a lazy name, as FigureSpec's.
    """

    name: str  # api_name of the streaming endpoint
    button: str
    session: Callable[[], object]
    close: Callable[[object], None]
    start: Callable[..., Iterator[object]]
    final: Callable[..., object]  # params -> the last snapshot of a fresh session's run
    params: tuple[str, ...]
    text: Callable[[object], str]
    live: Callable[[object], str]
    draws: Mapping[str, Callable[[object], FigureResult]]

    def __post_init__(self) -> None:
        for f in ("session", "close", "start", "final", "text", "live"):
            object.__setattr__(self, f, lazy(getattr(self, f)))
        object.__setattr__(self, "draws", {k: lazy(v) for k, v in self.draws.items()})


@dataclass(frozen=True, kw_only=True)
class TabSpec:
    """One tab: a lesson beside 2-6 up-front controls (the first is the hero) plus up to 3
    secondary ones named in `more` (folded under "More controls"; 8 in all), its figures and an
    optional live text panel."""

    id: str
    title: str
    controls: tuple[Control, ...]
    figures: tuple[FigureSpec, ...]
    live: LiveSpec | None = None
    run: RunSpec | None = None
    presets: tuple[Preset, ...] = ()
    more: tuple[str, ...] = ()  # secondary controls (seed, dtype, ...), folded in the UI

    def __post_init__(self) -> None:
        """Reject a malformed tab at import with ParamError naming what is wrong (not assert:
        the checks must hold under `python -O`)."""
        from core.errors import ParamError

        def need(ok: object, what: str) -> None:
            if not ok:
                raise ParamError(what)

        names = [c.name for c in self.controls]
        need(2 <= len(names) <= 8, f"tab {self.id}: 2-8 controls, got {len(names)}")
        need(set(self.more) <= set(names), f"tab {self.id}: more names unknown controls "
             f"{sorted(set(self.more) - set(names))}")
        need(names[0] not in self.more, f"tab {self.id}: the hero {names[0]} cannot be folded")
        up_front = len(names) - len(self.more)
        need(2 <= up_front <= 6, f"tab {self.id}: 2-6 up-front controls, got {up_front}")
        need(len(self.more) <= 3, f"tab {self.id}: at most 3 folded controls, got "
             f"{len(self.more)}")
        dup = sorted({n for n in names if names.count(n) > 1})
        need(not dup, f"tab {self.id}: duplicate control names {dup}")
        taken = sorted({"tab", "present"} & set(names))
        need(not taken, f"tab {self.id}: control names {taken} are share-link keys")
        for c in self.controls:
            if isinstance(c, Slider) and c.max_from is not None:
                src = next((x for x in self.controls if x.name == c.max_from), None)
                need(isinstance(src, Slider),
                     f"tab {self.id}: {c.name}.max_from {c.max_from!r} must name a slider")
        for f in self.figures:
            missing = sorted(set(f.params) - set(names))
            need(not missing, f"figure {f.name}: params {missing} have no control")
        if self.live is not None:
            missing = sorted(set(self.live.params) - set(names))
            need(not missing, f"live {self.live.name}: params {missing} have no control")
            need(self.live.name not in {f.name for f in self.figures},
                 f"live {self.live.name}: the name is taken by a figure")
        for p in self.presets:  # a preset the controls reject fails at import, never in class
            validate_all(self.controls, dict(p.values))
        presets = [p.name for p in self.presets]
        dup = sorted({n for n in presets if presets.count(n) > 1})
        need(not dup, f"tab {self.id}: duplicate presets {dup}")
        if self.run is not None:
            need(self.live is None, f"tab {self.id}: a run tab's live panel is run.live")
            missing = sorted(set(self.run.params) - set(names))
            need(not missing, f"run {self.run.name}: params {missing} have no control")
            need(set(self.run.draws) == {f.name for f in self.figures},
                 f"run {self.run.name}: draws must cover exactly the tab's figures")

    @property
    def hero(self) -> Control:
        return self.controls[0]

    @property
    def lesson_path(self) -> Path:
        return LESSONS / f"{self.id}.md"

    def lesson(self) -> str:
        """The lesson as shown: glossary [[terms]] become tooltips."""
        from tabs.glossary import link_terms

        return link_terms(self.lesson_path.read_text(encoding="utf-8"))

    def lesson_parts(self) -> tuple[str, str]:
        """(Predict card, the rest of the lesson) as shown: the card sits above the figures."""
        from tabs.glossary import link_terms
        from tabs.predict import split_predict

        card, rest = split_predict(self.lesson_path.read_text(encoding="utf-8"))
        return link_terms(card), link_terms(rest)

    def defaults(self) -> dict[str, object]:
        return {c.name: c.value for c in self.controls}

    def control(self, name: str) -> Control:
        return next(c for c in self.controls if c.name == name)

    def followers(self, name: str) -> tuple[Slider, ...]:
        """The sliders whose maximum follows control `name` (max_from)."""
        return tuple(c for c in self.controls if isinstance(c, Slider) and c.max_from == name)

    def redraw_order(self, name: str) -> tuple[FigureSpec, ...]:
        """The figures that moving control `name` (and its followers) redraws, in the order
        they are redrawn: the tab's figure order, which puts first the figure the hero changes
        most (tests/e2e/test_controls.py checks in chromium that it draws first)."""
        moved = {name, *(f.name for f in self.followers(name))}
        return tuple(f for f in self.figures if moved & set(f.params))


def render(
    fig: FigureSpec, tab: TabSpec, values: Mapping[str, object] | None = None
) -> FigureResult:
    """Validate values (defaults for missing ones) against the tab's controls, then draw."""
    return fig.fn(**validated(fig.params, tab, values))


def render_live(live: LiveSpec, tab: TabSpec, values: Mapping[str, object] | None = None,
                progress: Progress = no_progress) -> str:
    """Validate values like render() does, then measure: Markdown, different on every call."""
    return live.fn(**validated(live.params, tab, values), progress=progress)


def run_params(tab: TabSpec, values: Mapping[str, object] | None = None) -> dict[str, object]:
    """The run's parameters, validated like render()'s (defaults for missing ones)."""
    assert tab.run is not None
    return validated(tab.run.params, tab, values)


def validated(names: tuple[str, ...], tab: TabSpec,
              values: Mapping[str, object] | None) -> dict[str, object]:
    """The named parameters' values, validated against the tab's controls (defaults for the
    missing ones); ParamError names a bad one."""
    merged = {**tab.defaults(), **(values or {})}
    return validate_all(tab.controls, {p: merged[p] for p in names})
