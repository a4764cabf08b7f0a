"""Shareable state: the URL query names the tab and every non-default control.

`/?tab=kda_replay&draft_len=10` opens the KDA replay tab with draft_len 10 and every other
control at its default. `link_query(tab, values)` writes such a query (non-defaults only, in
control order); `parse_query(query)` reads one back, and `present=1` (presentation mode).
Parsing never fails: an unknown tab, an unknown name or a value the control rejects falls back
to the default, and each fallback is described in `notes`, which the page shows (never an
error page).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from core.errors import ParamError
from tabs.controls import Check, Control, Slider, Text
from tabs.registry import REGISTRY
from tabs.spec import TabSpec

TAB_KEY = "tab"
PRESENT_KEY = "present"  # ?present=1: the page opens in presentation mode
# Query keys Gradio itself uses; they are not ours to complain about.
IGNORED = frozenset({"__theme", "view", "lang"})


@dataclass(frozen=True, slots=True)
class Restored:
    tab: TabSpec
    values: dict[str, object]  # every control of the tab, validated
    notes: tuple[str, ...]  # one line per fallback to a default
    present: bool = False  # the link asks for presentation mode


def _from_text(c: Control, raw: str) -> object:
    if isinstance(c, Slider):
        x = float(raw)
        if c.integer:
            if not math.isfinite(x) or x != int(x):
                raise ParamError(f"{c.name} must be an integer in [{int(c.minimum)}, "
                                 f"{int(c.maximum)}], got {raw!r}")
            return c.validate(int(x))
        return c.validate(x)
    if isinstance(c, Check):
        flag = _flag(raw)
        if flag is None:
            raise ParamError(f"{c.name} must be true or false, got {raw!r}")
        return flag
    if isinstance(c, Text):
        return c.validate(raw)
    return c.validate(raw)


def parse_query(query: Mapping[str, str]) -> Restored:
    """The tab and control values a URL query asks for, defaults where it cannot be honoured."""
    notes: list[str] = []
    by_id = {t.id: t for t in REGISTRY}
    tab_id = query.get(TAB_KEY, REGISTRY[0].id)
    tab = by_id.get(tab_id)
    if tab is None:
        notes.append(f"There is no tab {tab_id!r}; showing {REGISTRY[0].title}.")
        tab = REGISTRY[0]
    values = dict(tab.defaults())
    names = {c.name: c for c in tab.controls}
    present = _flag(query.get(PRESENT_KEY, "0"))
    if present is None:
        notes.append(f"present must be 1 or 0, got {query[PRESENT_KEY]!r}; presentation mode "
                     "is off.")
    for key, raw in query.items():
        if key in (TAB_KEY, PRESENT_KEY) or key in IGNORED:
            continue
        c = names.get(key)
        if c is None:
            notes.append(f"{tab.title} has no control {key!r}; ignored.")
            continue
        try:
            values[key] = _from_text(c, raw)
        except (ParamError, ValueError) as e:
            msg = str(e) if isinstance(e, ParamError) else f"{key}={raw!r} is not a number"
            notes.append(f"{msg}; using the default {c.value!r}.")
    return Restored(tab, values, tuple(notes), bool(present))


def _flag(raw: str) -> bool | None:
    low = raw.strip().lower()
    return True if low in ("1", "true") else False if low in ("0", "false") else None


def _to_text(c: Control, v: object) -> str:
    if isinstance(c, Check):
        return "true" if v else "false"
    if isinstance(c, Slider) and c.integer:
        return str(int(v))  # type: ignore[arg-type]
    return str(v)


def link_query(tab: TabSpec, values: Mapping[str, object]) -> str:
    """`tab=<id>` then each control whose value differs from its default, URL-encoded."""
    pairs = [(TAB_KEY, tab.id)]
    for c in tab.controls:
        v = values.get(c.name, c.value)
        if v != c.value:
            pairs.append((c.name, _to_text(c, v)))
    return urlencode(pairs)
