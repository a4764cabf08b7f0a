"""A value typed into a control of the "More controls" fold just after it opens is kept, even
when the page's frames come late (a loaded machine): tests/e2e/controls.py says why a test must
wait out the fold's first frame, and this is the case that showed it."""

from __future__ import annotations

import pytest

from tests.e2e.controls import FRAMES, control
from tests.e2e.test_controls import BY_ID

pytestmark = pytest.mark.e2e

# every animation frame 0.3 s late: Gradio's first open of a fold sets its controls' values again
# one frame after they mount, so a value typed in between is put back (without the wait in
# controls.py 11 page loads of 12 lost the value typed; with it, 12 of 12 kept it
# with three busy loops on the 2 cores)
SLOW_FRAMES = """(() => { const raf = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (cb) => raf((t) => setTimeout(() => cb(t), 300)); })()"""


def test_a_value_typed_as_the_fold_first_opens_is_kept(page, app_url):
    page.add_init_script(SLOW_FRAMES)
    tab = BY_ID["fleet_ring"]
    kept = []
    for value in ("12", "5"):  # two page loads: each is a first open
        page.goto(f"{app_url}?tab={tab.id}")
        page.locator(f"#{tab.id}-more").wait_for(timeout=30_000)
        # the tab's own first open sets its components' props one frame after they mount, the
        # fold's `open` among them: a fold opened before that frame closed again (1 test in 6
        # under three busy loops, before this wait; 0 in 6 after it)
        page.evaluate(FRAMES)
        box = control(page, tab, "clusters")  # opens the fold: "clusters" is not the hero
        box.fill(value)
        page.wait_for_timeout(1_000)  # past the frame the fold's first open sets its values in
        kept.append(box.input_value() == value)
    assert kept == [True, True]
