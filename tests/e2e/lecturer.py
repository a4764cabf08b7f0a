"""A lecturer walking the lab in chromium, several pages at once: each page opens its tabs from
the tab bar and tries every preset, and the walk records what a person would see go wrong.

A walk is a round robin over pages (one thread, playwright's sync API): a page that waits (for
its figures, or through a preset's hold) lets the others act, so the holds overlap and a walk
of every preset costs about a quarter of doing them one after the other.

For each tab opened: no error toast and no error badge; the hero and the first figure start on
the first screen. For each preset, once the page shows the preset's values drawn (the tab's
drawn view, the figures' link query) and nothing is loading, and again HOLD_S later: the preset
menu still names it and its line still shows, the drawn view is still the preset's (a step
preset still at its step), every control the page shows holds its value, and nothing shows an
error.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from tabs.clamp import clamp_tab
from tabs.share import PRESENT_KEY, link_query
from tabs.spec import Preset, TabSpec

HOLD_S = 3.0  # how long a preset must hold after it has drawn
SETTLE_S = 90.0  # how long a tab's figures or a preset's draw may take on a busy machine
POLL_S = 0.1

# what the page shows wrong: an error toast, or an error badge on any component of the page
ERRORS = """() => [...document.querySelectorAll('.toast-body, .error')]
  .filter(e => e.offsetParent).map(e => e.innerText.trim().slice(0, 160)).filter(t => t)"""
# what a tab shows: its drawn view, whether anything in it loads, its figures' images, and the
# values of the number boxes and checkboxes it has mounted
SHOWN = """(id) => {
  const t = document.querySelector('#tab-' + id);
  if (!t || !t.offsetParent) return null;
  const view = t.querySelector('.lab-view textarea, .lab-view input');
  const loading = [...t.querySelectorAll('.progress-text, .meta-text, .eta-bar')]
    .some(e => e.offsetParent);
  const imgs = [...t.querySelectorAll('[data-testid=matplotlib] img')].map(i => !!i.src);
  const boxes = {};
  t.querySelectorAll('input[type=number]').forEach(e => {
    const b = e.closest('[id^="' + id + '-"]'); if (b && e.offsetParent) boxes[b.id] = e.value; });
  t.querySelectorAll('input[type=checkbox]').forEach(e => {
    const b = e.closest('[id^="' + id + '-"]');
    if (b && e.offsetParent) boxes[b.id] = e.checked; });
  const preset = t.querySelector('#' + id + '-preset input');
  const why = t.querySelector('#' + id + '-preset-why');
  return {view: view ? view.value : null, loading, imgs, boxes,
          preset: preset ? preset.value : null, why: why ? why.innerText.trim() : null};
}"""
# where the hero and the tab's main thing start (its first figure; on a run tab, Generate and
# the streamed text), from the top of the page
FIRST_SCREEN = """([id, main]) => {
  const top = (s) => { const e = document.querySelector(s);
    return e ? e.getBoundingClientRect().top + window.scrollY : null; };
  const out = {hero: top('#tab-' + id + ' .hero'), height: window.innerHeight};
  main.forEach(([name, sel]) => { out[name] = top(sel); });
  return out;
}"""


def expected(tab: TabSpec, preset: Preset) -> dict[str, object]:
    """Every control's value once the preset is drawn: the preset's values, the rest at their
    defaults, a step slider clamped to its run (tabs/clamp.py)."""
    values = {**tab.defaults(), **preset.values}
    return clamp_tab(tab, values, None).values


def view_of(tab: TabSpec, values: dict[str, object], present: bool) -> str:
    return link_query(tab, values) + (f"&{PRESENT_KEY}=1" if present else "")


def _shows(shown: object, want: object) -> bool:
    """A control shows `want`: a number box's text as the number, a checkbox as its state."""
    if isinstance(shown, str):
        try:
            return float(shown) == float(want)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
    return shown == want


@dataclass
class Walk:
    """One page's walk: what it found wrong, and the presets it saw hold."""

    name: str
    found: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)

    def wrong(self, what: str) -> None:
        self.found.append(f"{self.name}: {what}")


def _poll(page, tab: TabSpec, want_view: str | None, deadline: float) -> Iterator[dict | None]:
    """Yield None while the tab is not yet settled (the drawn view is `want_view`, nothing
    loads, every figure has an image), then the settled state once; a timeout yields a state
    with 'timeout' set."""
    while True:
        s = page.evaluate(SHOWN, tab.id)
        ok = (s is not None and not s["loading"] and s["imgs"] and all(s["imgs"])
              and (want_view is None or s["view"] == want_view))
        if ok:
            yield s
            return
        if time.monotonic() > deadline:
            yield {**(s or {}), "timeout": True}
            return
        yield None


def offered(tab: TabSpec, room: Mapping[str, object]) -> list[Preset]:
    """The presets a page offers: in class mode (`room`: the controls the room sets, with its
    values), not those that would set one of them otherwise."""
    fixed = room if tab.run is not None else {}
    return [p for p in tab.presets
            if all(k not in fixed or fixed[k] == v for k, v in p.values.items())]


def walk_page(page, walk: Walk, tabs: Sequence[TabSpec], present: bool,
              room: Mapping[str, object] | None = None) -> Iterator[None]:
    """The walk of one page as a generator: it yields whenever it waits, so a round robin can
    drive several pages at once (drive())."""
    for tab in tabs:
        page.get_by_role("tab", name=tab.title, exact=True).click()
        walk.opened.append(tab.id)
        # the tab's first draw: its defaults (or whatever this page last drew on it)
        for s in _poll(page, tab, None, time.monotonic() + SETTLE_S):
            if s is None:
                yield
                continue
            if s.get("timeout"):
                walk.wrong(f"{tab.id}: its figures did not draw in {SETTLE_S:.0f} s ({s})")
        _errors(page, walk, f"{tab.id} opened")
        main = ([["Generate", f"#{tab.id}-go"], ["streamed text", f"#{tab.run.name}-text"]]
                if tab.run is not None else [["figure", f"#{tab.figures[0].name}-plot"]])
        geo = page.evaluate(FIRST_SCREEN, [tab.id, main])
        for part in ("hero", *(m[0] for m in main)):
            if geo[part] is None or geo[part] >= geo["height"]:
                walk.wrong(f"{tab.id}: the {part} starts at {geo[part]} px, below the first "
                           f"screen ({geo['height']} px)")
        for preset in offered(tab, room or {}):
            yield from _try_preset(page, walk, tab, preset, present)


def _try_preset(page, walk: Walk, tab: TabSpec, preset: Preset, present: bool) -> Iterator[None]:
    want = expected(tab, preset)
    view = view_of(tab, want, present)
    page.locator(f"#{tab.id}-preset input").click()
    # force: no wait for the list to hold still over two animation frames, which a page on a
    # starved machine did not give for 30 s (two busy loops, --class); a wrong pick still
    # fails below (the menu must name the preset)
    option = page.get_by_role("option", name=preset.name, exact=True)
    option.wait_for(state="visible", timeout=30_000)
    option.click(force=True)
    what = f"{tab.id} preset {preset.name!r}"
    settled = None
    for s in _poll(page, tab, view, time.monotonic() + SETTLE_S):
        if s is None:
            yield
            continue
        settled = s
    if settled.get("timeout"):
        walk.wrong(f"{what}: not drawn in {SETTLE_S:.0f} s; the page drew {settled.get('view')!r}"
                   f", want {view!r}")
        return
    until = time.monotonic() + HOLD_S
    while time.monotonic() < until:
        yield
    s = page.evaluate(SHOWN, tab.id)
    bad = []
    if s["view"] != view:
        bad.append(f"drawn view {s['view']!r}, want {view!r}")
    if s["preset"] != preset.name:
        bad.append(f"the preset menu shows {s['preset']!r}")
    if not s["why"] or s["why"].strip("*_ ") != preset.why:
        bad.append(f"its line shows {s['why']!r}")
    for c in tab.controls:
        shown = s["boxes"].get(f"{tab.id}-{c.name}")  # a number box's text, or a check's state
        if shown is not None and not _shows(shown, want[c.name]):
            bad.append(f"{c.name} shows {shown!r}, want {want[c.name]!r}")
    if bad:
        walk.wrong(f"{what}, {HOLD_S:.0f} s after it drew: " + "; ".join(bad))
    else:
        walk.held.append(what)
    _errors(page, walk, what)


def _errors(page, walk: Walk, when: str) -> None:
    errs = page.evaluate(ERRORS)
    if errs:
        walk.wrong(f"{when}: error shown: {errs[:3]}")


def drive(walks: Sequence[Iterator[None]], timeout_s: float) -> None:
    """Round robin over the pages' walks until all end (or the time is up: AssertionError)."""
    live = list(walks)
    end = time.monotonic() + timeout_s
    while live:
        if time.monotonic() > end:
            raise AssertionError(f"the walk did not end in {timeout_s:.0f} s")
        for w in list(live):
            try:
                next(w)
            except StopIteration:
                live.remove(w)
        time.sleep(POLL_S / max(1, len(live)))


def shards(tabs: Sequence[TabSpec], n: int) -> list[list[TabSpec]]:
    """The tabs dealt to n pages, each page's share about the same number of presets."""
    out: list[list[TabSpec]] = [[] for _ in range(n)]
    load = [0] * n
    for t in sorted(tabs, key=lambda t: -len(t.presets)):
        i = load.index(min(load))
        out[i].append(t)
        load[i] += len(t.presets) + 1
    order = {t.id: k for k, t in enumerate(tabs)}
    return [sorted(s, key=lambda t: order[t.id]) for s in out]
