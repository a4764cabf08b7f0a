"""The lecturer's route, in chromium (tests/e2e/lecturer.py walks it): every tab opened from the
tab bar and every preset of every tab tried, four pages at once,
  - at 1400 x 900, and in presentation mode at 1024 x 768, on `python app.py`;
  - at 1400 x 900 on `python app.py --class` (its own process, as a lecturer starts it), while
    three pages generate on Serve at once.
Each checks what a person would see: no error toast or badge, the hero and its figure on the
first screen, and each preset still shown, with every control it set and the figures drawn
for it, 3 s after it drew."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.model.manifest import shipped_dims
from core.serve.limits import default_slots
from tabs.registry import REGISTRY
from tests.e2e.lecturer import ERRORS, Walk, drive, offered, shards, walk_page

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
PAGES = 4
WALK_S = 900
SERVE = next(t for t in REGISTRY if t.run is not None)
# what the class room sets for every page: its expert cache misses as the lesson's default
# does (a quarter of the experts), its prefix cache is on, cache-aware routing is off
ROOM = {"capacity": default_slots(shipped_dims()), "prefix_cache": True, "routing": False}


def _pages(browser, n: int, width: int, height: int) -> list:
    """n pages, each its own browser session (a student's or the lecturer's)."""
    out = []
    for _ in range(n):
        ctx = browser.new_context(viewport={"width": width, "height": height},
                                  device_scale_factor=1, reduced_motion="reduce")
        out.append(ctx.new_page())
    return out


def _walk(browser, url: str, width: int, height: int, present: bool, name: str,
          room: dict | None = None) -> list[Walk]:
    pages = _pages(browser, PAGES, width, height)
    walks = []
    for i, page in enumerate(pages):
        page.goto(url)
        page.locator(f"#{REGISTRY[0].figures[0].name}-plot img").wait_for(timeout=90_000)
        if present:
            page.locator("#present-toggle input").check()
        walks.append(Walk(f"{name} page {i + 1}"))
    drive([walk_page(p, w, t, present, room) for p, w, t in
           zip(pages, walks, shards(REGISTRY, PAGES), strict=True)], WALK_S)
    for p in pages:
        p.context.close()
    return walks


def _report(walks: list[Walk], room: dict | None = None) -> None:
    found = [f for w in walks for f in w.found]
    opened = sorted({t for w in walks for t in w.opened})
    assert opened == sorted(t.id for t in REGISTRY), f"tabs not walked: {opened}"
    held = sum(len(w.held) for w in walks)
    assert not found, f"{len(found)} things went wrong ({held} presets held):\n" + "\n".join(
        found)
    assert held == sum(len(offered(t, room or {})) for t in REGISTRY)


@pytest.mark.parametrize(("width", "height", "present"), [(1400, 900, False), (1024, 768, True)],
                         ids=["1400x900", "present-1024x768"])
def test_the_lecturers_route_holds(browser, app_url, width, height, present):
    _report(_walk(browser, app_url, width, height, present,
                  f"{width}x{height}{' presenting' if present else ''}"))


@pytest.fixture(scope="module")
def class_url() -> str:
    """`python app.py --class` in a process of its own, on a free port of 127.0.0.1."""
    from tests.conftest import _free_port

    port = _free_port()
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"}
    proc = subprocess.Popen([sys.executable, "app.py", "--class", "--port", str(port)],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    log: list[str] = []
    up = threading.Event()

    def read() -> None:  # drained to the end: a full pipe would stall the server
        for line in proc.stdout:
            log.append(line)
            if "Running on" in line:
                up.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not up.wait(120):
            raise AssertionError("app.py --class did not start:\n" + "".join(log))
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        reader.join(timeout=10)
        out = "".join(log)
        tracebacks = out.count("Traceback")
        assert tracebacks == 0, f"the class server logged {tracebacks} tracebacks:\n{out[-4000:]}"


def test_the_class_route_holds_while_three_pages_generate(browser, class_url):
    """Three pages open Serve as a room would and press Generate at once: each page's text
    fills in and nothing shows an error, on the projector's page either; then every tab and
    preset is walked as above, on the class server."""
    pages = _pages(browser, 3, 1400, 900)
    for page in pages:
        page.goto(f"{class_url}/?tab={SERVE.id}")
    text = f"#{SERVE.run.name}-text"
    for page in pages:  # the tab's opening run replaces the placeholder
        page.wait_for_function(f"() => {{ const t = document.querySelector('{text}');"
                               " return t && t.innerText.trim() &&"
                               " !t.innerText.includes('Served when the tab opens'); }",
                               timeout=120_000)
    for page in pages:
        page.locator(f"#{SERVE.id}-go").click()
    status = f"#{SERVE.run.name}-status"
    for page in pages:
        page.wait_for_function(f"() => (document.querySelector('{status}') || {{}})"
                               ".innerText === 'done'", timeout=180_000)
    errors = {i: page.evaluate(ERRORS) for i, page in enumerate(pages)}
    assert not any(errors.values()), f"errors shown after Generate: {errors}"
    for p in pages:
        p.context.close()
    _report(_walk(browser, class_url, 1400, 900, False, "class 1400x900", ROOM), ROOM)


# every text the run's panel shows, in order (its own words: not the progress timer Gradio
# writes into it, "0.4s" or "queue: 2/2 | 1.2s")
SEEN = """(sel) => { window.labSeen = []; const t = document.querySelector(sel);
  const text = () => (t.querySelector('.prose') || t).innerText.trim();
  const old = text();
  new MutationObserver(() => {
    const s = text();
    if (s && s !== old && s !== window.labSeen[window.labSeen.length - 1]) window.labSeen.push(s);
  }).observe(t, {childList: true, subtree: true, characterData: true}); }"""


def test_a_page_whose_generate_waits_says_so_and_how_many_are_ahead(browser, app_url):
    """Four pages press Generate at once on a server that runs two at a time: each page's old
    text goes at once; a page that waits says so and how many pages are ahead of it, and every
    page ends with its own run done."""
    pages = _pages(browser, 4, 1400, 900)
    text, status = f"#{SERVE.run.name}-text", f"#{SERVE.run.name}-status"
    for page in pages:
        page.goto(f"{app_url.rstrip('/')}/?tab={SERVE.id}&n_new=256")
        page.wait_for_function(f"() => {{ const t = document.querySelector('{text}');"
                               " return t && t.innerText.includes('Output'); }", timeout=120_000)
    for page in pages:  # every text the panel shows from now on, in order
        page.evaluate(SEEN, text)
    for page in pages:
        page.locator(f"#{SERVE.id}-go").click()
    said = []
    for page in pages:  # the first answer to a click replaces the old output
        page.wait_for_function("() => window.labSeen.length > 0", timeout=10_000)
        said.append(page.evaluate("() => window.labSeen[0]"))
    assert not any(s.startswith("Output") for s in said), said
    waiting = [s for s in said if "Your request is waiting" in s]
    assert len(waiting) >= 2, said  # the line is served two at a time
    assert all("ahead of yours" in s for s in waiting), waiting
    assert any("page is ahead" in s or "pages are ahead" in s for s in waiting), waiting
    for page in pages:
        page.wait_for_function(f"() => (document.querySelector('{status}') || {{}})"
                               ".innerText === 'done'", timeout=300_000)
        assert "Output" in page.locator(text).inner_text()
    for p in pages:
        p.context.close()
