"""Reaching a tab's controls in chromium: every control but the hero (and a run's text) sits
in the tab's closed "More controls" fold (tabs/ui.py), which a student opens first."""

from __future__ import annotations


def control(page, tab, name: str, part: str = "input[type=number]"):
    """The locator of control `name`'s `part`, its fold opened first if it is closed."""
    loc = page.locator(f"#{tab.id}-{name} {part}")
    fold = page.locator(f"#{tab.id}-more")
    if name != tab.hero.name and fold.count() and not loc.is_visible():
        fold.get_by_text("More controls").click()
        loc.wait_for(state="visible", timeout=10_000)
    return loc
