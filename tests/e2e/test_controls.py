"""In front of a class, in chromium: the hero stands out and every info line is readable, the
Predict card tops the figure column, secondary knobs fold, slider keys and a typed value
redraw like a drag, an out-of-range value is clamped visibly with every figure following,
the hero's main figure draws first, figures carry alt text, and presentation mode is per
browser session (toggle or ?present=1)."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tabs.alt import alt_text
from tabs.controls import Slider
from tabs.registry import REGISTRY
from tabs.spec import render
from tests.e2e.controls import control, shown

pytestmark = pytest.mark.e2e
BY_ID = {t.id: t for t in REGISTRY}
PLOT = "#{} [data-testid=matplotlib] img"


def _src(tab, fig, values=None, present=False) -> str:
    return shown(fig, tab, values, present)


def _wait_figures(page, tab, values=None, present=False, timeout=60_000) -> None:
    """Wait until every figure of the tab shows its PNG for these values; on a timeout, fail
    saying what each figure shows instead (these values', the defaults', another, none) and
    what the page's controls hold, so a failure in CI says which side went wrong."""
    want = [[PLOT.format(f"{f.name}-plot"), _src(tab, f, values, present)] for f in tab.figures]
    try:
        page.wait_for_function(
            "(w) => w.every(([s, src]) => { const i = document.querySelector(s);"
            " return i && i.src === src; })", arg=want, timeout=timeout)
    except PlaywrightTimeout:
        shown = page.evaluate("(w) => w.map(([s]) => { const i = document.querySelector(s);"
                              " return i ? i.src : null; })", want)
        defaults = [_src(tab, f, None, present) for f in tab.figures]
        what = {f.name: "these values" if s == w[1] else "none" if s is None else
                "the defaults" if s == d else "another" for f, s, w, d in
                zip(tab.figures, shown, want, defaults, strict=True)}
        boxes = page.evaluate("(id) => [...document.querySelectorAll(`#tab-${id} "
                              "input[type=number]`)].map(e => e.value)", tab.id)
        raise AssertionError(f"after {timeout} ms the figures of {tab.id} for {values} show: "
                             f"{what}; the page's number boxes hold {boxes}") from None


CONTRAST = """(sel) => [...document.querySelectorAll(sel)].filter(e => e.offsetParent).map(e => {
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 4).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((a, v, i) => a + v * [0.2126, 0.7152, 0.0722][i], 0);
  let b = e, bg = null;
  while (b) { const c = getComputedStyle(b).backgroundColor; const v = rgb(c);
    if (v.length < 4 || v[3] > 0) { bg = v; break; } b = b.parentElement; }
  const [l1, l2] = [lum(rgb(getComputedStyle(e).color)), lum(bg || [255, 255, 255])];
  return [e.innerText.slice(0, 40), (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05)];
})"""


def test_hero_predict_card_more_fold_and_readable_info(page, app_url):
    tab = BY_ID["cache_policies"]
    page.goto(f"{app_url}?tab={tab.id}")
    page.locator(PLOT.format(f"{tab.figures[0].name}-plot")).wait_for(timeout=60_000)
    hero = page.locator(f"#{tab.id}-{tab.hero.name}")
    assert "hero" in hero.get_attribute("class")
    label_px = hero.locator("[data-testid=block-info]").evaluate(
        "e => parseFloat(getComputedStyle(e).fontSize)")
    # The Predict card is the figure column's first block; the lesson column does not repeat it.
    first = page.locator(f"#tab-{tab.id} .lab-figures > *").first
    assert first.get_attribute("id") == f"{tab.id}-predict"
    assert "Predict" in first.inner_text()
    lessons = page.locator(f"#tab-{tab.id} .block.lesson")
    assert lessons.count() >= 1
    assert all("Predict" not in lessons.nth(i).inner_text() for i in range(lessons.count()))
    # Every other control sits in a closed "More controls" fold, the secondary knobs last.
    fold = page.locator(f"#{tab.id}-more")
    others = [c.name for c in tab.controls[1:]]
    assert fold.is_visible() and tab.more
    for name in others:
        assert not page.locator(f"#{tab.id}-{name}").is_visible(), name
    fold.get_by_text("More controls").click()
    for name in others:
        fold.locator(f"#{tab.id}-{name}").wait_for(state="visible", timeout=10_000)
    ids = fold.locator("[id]").evaluate_all("es => es.map(e => e.id)")
    order = [n for n in (c.name for c in tab.controls) if f"{tab.id}-{n}" in ids]
    assert order[-len(tab.more):] == [c.name for c in tab.controls if c.name in tab.more]
    other = page.locator(f"#{tab.id}-{tab.controls[1].name} [data-testid=block-info]")
    assert label_px > other.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    ratios = page.evaluate(CONTRAST, f"#tab-{tab.id} .info-text")
    assert ratios and all(r >= 4.5 for _, r in ratios), ratios


def test_typed_out_of_range_is_clamped_visibly_and_every_figure_follows(page, app_url):
    """draft_len 99 + Enter on a 1..8 slider: the box shows 8, a note says so, every figure
    is drawn for 8, and no error toast appears."""
    tab = BY_ID["replay_ring"]
    c = tab.control("draft_len")
    page.goto(f"{app_url}?tab={tab.id}")
    _wait_figures(page, tab)
    box = control(page, tab, c.name)
    box.fill("99")
    box.press("Enter")
    top = int(c.maximum)
    _wait_figures(page, tab, {c.name: top})
    assert float(box.input_value()) == top
    note = page.locator(f"#{tab.id}-clamp-note")
    want = f"Draft length γ: 99 is above its maximum {top}, set to {top}"
    assert note.inner_text().strip() == want
    assert page.locator(".toast-body").count() == 0


@pytest.mark.parametrize(("name", "typed"), [("c", "1.5"), ("sessions", "1000")])
def test_a_value_typed_key_by_key_is_kept_and_drawn(page, app_url, name, typed):
    """Typed one key at a time, as a student types, "1.5" passes through "1." (not a number)
    and "1000" through 1 (below the slider's minimum of 600): the box keeps every key, and
    Enter draws every figure for the typed value. The clamp that once ran at every key put the
    default back mid-word (tabs/ui_draw.py TabParts.clamp_outputs)."""
    tab = BY_ID["fleet_ring"]
    page.goto(f"{app_url}?tab={tab.id}")
    _wait_figures(page, tab)
    box = control(page, tab, name)
    box.fill("")
    box.type(typed, delay=150)
    assert box.input_value() == typed
    box.press("Enter")
    value = float(typed) if "." in typed else int(typed)
    _wait_figures(page, tab, {name: value})
    assert box.input_value() == typed
    assert not page.locator(f"#{tab.id}-clamp-note").is_visible()  # nothing was clamped


ORDER_JS = """() => { window.__drawn = []; const last = {}; const t0 = performance.now();
  const poll = () => { document.querySelectorAll('[id$=-plot] [data-testid=matplotlib] img')
    .forEach(img => { const id = img.closest('[id$=-plot]').id.slice(0, -5);
      if (last[id] !== undefined && last[id] !== img.src)
        window.__drawn.push([id, Math.round(performance.now() - t0)]);
      last[id] = img.src; });
    window.__raf = requestAnimationFrame(poll); }; poll(); }"""


@pytest.mark.parametrize("tab_id", ["replay_ring", "kda_replay"])
def test_arrow_key_redraws_and_the_heros_main_figure_comes_first(page, app_url, tab_id):
    """An arrow key on the hero slider redraws the tab like a drag release; the figure the hero
    moves most updates first (times printed: ms after the key)."""
    tab = BY_ID[tab_id]
    hero = tab.hero
    assert isinstance(hero, Slider)
    page.goto(f"{app_url}?tab={tab.id}")
    _wait_figures(page, tab)
    page.evaluate(ORDER_JS)
    rng = page.locator(f"#{tab.id}-{hero.name} input[type=range]")
    rng.focus()
    start = time.perf_counter()
    rng.press("ArrowRight")
    moved = {hero.name: hero.value + hero.step}
    _wait_figures(page, tab, moved)
    total = time.perf_counter() - start
    drawn = page.evaluate("window.__drawn")
    order = [name for name, _ in drawn]
    print(f"\n{tab.id}: arrow key -> {drawn}; whole tab {total:.2f} s")
    assert order[0] == tab.redraw_order(hero.name)[0].name, drawn
    assert set(order) == {f.name for f in tab.redraw_order(hero.name)}


def test_a_glossary_term_opens_on_a_click_and_on_keyboard_focus(page, app_url):
    """A lesson's glossary term shows its definition when clicked (or tapped) and when reached
    by keyboard, in text of at least 14 px; away from it, the definition is hidden."""
    tab = BY_ID["overview"]
    page.goto(f"{app_url}?tab={tab.id}")
    page.locator(PLOT.format(f"{tab.figures[0].name}-plot")).wait_for(timeout=60_000)
    term = page.locator(f"#tab-{tab.id} .lesson .term").first
    definition = term.locator(".term-def")
    assert term.get_attribute("tabindex") == "0"
    assert not definition.is_visible()
    term.click()
    definition.wait_for(state="visible", timeout=5_000)
    assert definition.evaluate("e => parseFloat(getComputedStyle(e).fontSize)") >= 14
    # seen whole, not clipped by its column: what is on screen at its right end is itself
    definition.scroll_into_view_if_needed()
    assert definition.evaluate("""e => { const r = e.getBoundingClientRect();
      const at = document.elementFromPoint(r.right - 4, r.top + r.height / 2);
      return at === e || e.contains(at); }""")
    page.mouse.click(5, 5)  # away: blur, and no hover
    definition.wait_for(state="hidden", timeout=5_000)
    term.focus()
    definition.wait_for(state="visible", timeout=5_000)


@pytest.mark.parametrize("tab_id", ["prefix", "engine"])
def test_a_step_sliders_maximum_is_its_runs_length(page, app_url, tab_id):
    """Opened at its defaults, the step slider runs from 1 to the last step of the run its
    figure steps through (prefix: the lookup's steps; engine: the verify passes), and moving
    the control the run depends on moves that maximum."""
    from tabs.lazy import lazy

    tab = BY_ID[tab_id]
    step = tab.control("step")
    page.goto(f"{app_url}?tab={tab.id}")
    _wait_figures(page, tab)
    rng = control(page, tab, "step", "input[type=range]")
    d = tab.defaults()
    want = lazy(step.max_of)(**{p: d[p] for p in step.max_params})
    assert want < step.maximum and int(rng.get_attribute("max")) == want
    assert int(float(rng.input_value())) == want  # the default shows the whole run
    src = tab.control(step.max_params[0])
    other = src.demo
    page.goto(f"{app_url}?tab={tab.id}&{src.name}={other}")
    _wait_figures(page, tab, {src.name: other})
    rng = control(page, tab, "step", "input[type=range]")
    moved = lazy(step.max_of)(**{p: {**d, src.name: other}[p] for p in step.max_params})
    assert int(rng.get_attribute("max")) == moved


def test_figures_carry_alt_text(page, app_url):
    tab = BY_ID["paging"]
    page.goto(f"{app_url}?tab={tab.id}")
    _wait_figures(page, tab)
    for fig in tab.figures:
        alt = page.locator(PLOT.format(f"{fig.name}-plot")).get_attribute("alt")
        assert alt == alt_text(fig.title, render(fig, tab).metrics)


def test_presentation_mode_is_per_session(browser, app_url):
    """?present=1 opens presenting (toggle on, projector figures); another browser session
    still sees normal figures; toggling off redraws normal figures."""
    tab = BY_ID["paging"]
    one, two = browser.new_page(), browser.new_page()
    try:
        one.goto(f"{app_url}?tab={tab.id}&present=1")
        _wait_figures(one, tab, present=True)
        assert one.locator("#present-toggle input").is_checked()
        assert one.evaluate("document.body.classList.contains('presenting')")
        two.goto(f"{app_url}?tab={tab.id}")
        _wait_figures(two, tab)
        one.locator("#present-toggle input").uncheck()
        _wait_figures(one, tab)
        assert not one.evaluate("document.body.classList.contains('presenting')")
    finally:
        one.close()
        two.close()


def test_live_panel_measures_on_its_button_and_says_when_the_controls_moved(page, app_url):
    """Opening a tab and moving a slider measure nothing (a measurement takes seconds); the
    button measures for the current settings; a later move shows the stale note, which the
    next measurement clears."""
    tab = BY_ID["prefix"]
    live = tab.live
    page.goto(f"{app_url}?tab={tab.id}")
    _wait_figures(page, tab)
    panel = page.locator(f"#{live.name}-live")
    stale = page.locator(f"#{live.name}-stale")
    assert panel.inner_text().startswith("Not measured yet")
    hero = tab.hero
    box = page.locator(f"#{tab.id}-{hero.name} input[type=number]")
    box.fill(str(hero.demo))
    box.blur()
    _wait_figures(page, tab, {hero.name: hero.demo})
    assert panel.inner_text().startswith("Not measured yet")  # the move measured nothing
    assert not stale.is_visible()  # nothing measured, so nothing stale

    def waiting(what: str, wait) -> None:  # a timeout says what the page showed (seen once in
        try:                               # five e2e runs at -n 2, its message not kept)
            wait()
        except Exception as e:  # noqa: BLE001 (re-raised with the page's state)
            raise AssertionError(
                f"{what}: the panel says {panel.inner_text()[:120]!r}, the stale note is "
                f"{'shown' if stale.is_visible() else 'hidden'}, the box holds "
                f"{box.input_value()!r}") from e

    page.locator(f"#{live.name}-button").click()
    waiting("measuring the demo value", lambda: panel.get_by_text(
        f"a checkpoint group every {hero.demo} block(s)").wait_for(timeout=60_000))
    box.fill(str(hero.value))
    box.blur()
    waiting("the stale note after a move", lambda: stale.wait_for(state="visible",
                                                                   timeout=30_000))
    page.locator(f"#{live.name}-button").click()
    waiting("the stale note after measuring again", lambda: stale.wait_for(state="hidden",
                                                                            timeout=30_000))
    waiting("measuring the default", lambda: panel.get_by_text(
        f"a checkpoint group every {hero.value} block(s)").wait_for(timeout=60_000))
