"""Reaching a tab's controls in chromium: every control but the hero (and a run's text) sits
in the tab's closed "More controls" fold (tabs/ui.py), which a student opens first.

Gradio mounts a closed fold's controls the first time it opens, and one animation frame later
sets every one of them again to the value its page's store holds
(`render_previously_invisible_children` in its page's core: mount, a tick, a frame, then each
control's props). A value typed in that frame is put back: no student types that fast, a test
does (the clusters box of fleet_ring held its default after `fill("12")` in one CI run, and in
0 of 95 runs here under load; tests/e2e/test_fold.py makes that frame 0.3 s long, and fails
without the wait). So a test waits that frame out. A tab's first open does the same to its own
components, the fold's `open` among them: a test waits for the tab's figures (or that frame)
before it touches a control."""

from __future__ import annotations

from collections.abc import Mapping

# two animation frames: the fold's first open sets its controls' values in the frame after they
# mount, and its request for that frame is made before this one's (a tick after the mount).
# At most FRAMES_MS: a full run once saw a page's frames stop after a resize (the wait hung until
# pytest-timeout's 300 s); geometry read afterwards is laid out on the spot all the same.
FRAMES_MS = 2000
FRAMES = ("() => new Promise((r) => { requestAnimationFrame(() => requestAnimationFrame("
          f"() => r(true))); setTimeout(() => r(false), {FRAMES_MS}); }})")


def control(page, tab, name: str, part: str = "input[type=number]"):
    """The locator of control `name`'s `part`, its fold opened first if it is closed."""
    loc = page.locator(f"#{tab.id}-{name} {part}")
    fold = page.locator(f"#{tab.id}-more")
    if name != tab.hero.name and fold.count() and not loc.is_visible():
        fold.get_by_text("More controls").click()
        loc.wait_for(state="visible", timeout=10_000)
        page.evaluate(FRAMES)
    return loc


def shown(fig, tab, values: Mapping[str, object] | None = None, present: bool = False) -> str:
    """The image src the page must show for figure `fig` at these values: the server's render
    cache's entry for them (tabs/render_cache.py), rendered here if the page has not asked for
    it yet. A page that asks for other values gets another entry, so the comparison still
    fails; what is saved is the second render of every figure a test and its page both drew
    (that an entry is its values' direct render: tests/app/test_api.py, every figure at its
    defaults through its endpoint)."""
    from tabs.render_cache import rendered

    return rendered(fig, tab, values, present).plot
