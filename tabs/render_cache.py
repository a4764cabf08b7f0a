"""RENDERS: every figure rendered for anyone, shared by every session of the server.

A figure is a pure function of its parameters and of presentation mode (tabs/figure.py), so
what one session drew serves the next: a class following its lecturer through the presets
costs one render per preset, the page opening's default figures a lookup.

  rendered(fig, tab, values, present) -> Rendered   validates values like tabs.spec.render
                                                    (ParamError names the parameter), then
                                                    returns the cached render or renders it once
                                                    however many sessions ask at the same moment
  configure(max_bytes)                              the bound (default DEFAULT_MAX_BYTES; the
                                                    app's --render-cache-mib)

Renders run RENDER_SLOTS at a time for the whole server (the cores: more at once only slows
each), behind a semaphore of their own: a hit or a join never waits for a slot, so a class
asking for figures already drawn is answered in milliseconds while another figure renders.
(Gradio's concurrency limits cannot say this: they count events, hit or render alike, so one
slow render held a slot that every hit of its event group then queued behind.)

Key: (the FigureSpec (its name, title and function), presenting, the validated values of the
figure's own parameters, in its parameter order): two requests that differ only in a control
the figure does not read, or in the form of a number (8 vs 8.0), share one entry. Value: the
PNG as the data URL gr.Plot serves, the alt text and the metrics table; bounded by the bytes
of those strings, least recently used first (core/experiments/flight.py). Never cached: a
figure that raised (its error is drawn in its place instead), the live panels
(measurements), the Serve tab's run (streamed snapshots of a session's own engine) and the
"computing..." headings (titles, not figures).
"""

from __future__ import annotations

import base64
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from core.experiments.flight import FlightStats, SingleFlight
from tabs.alt import alt_text
from tabs.figure import presenting, render_png
from tabs.metrics import to_markdown
from tabs.spec import FigureSpec, TabSpec, validated

DEFAULT_MAX_BYTES = 256 << 20
RENDER_SLOTS = max(1, min(4, os.cpu_count() or 1))
_slots = threading.BoundedSemaphore(RENDER_SLOTS)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rendered:
    plot: str  # data:image/png;base64,...
    alt: str
    table: str  # the metrics as a Markdown table

    @property
    def nbytes(self) -> int:
        return len(self.plot) + len(self.alt) + len(self.table)

    def png(self) -> bytes:
        return base64.b64decode(self.plot.split(",", 1)[1])


RENDERS: SingleFlight[tuple, Rendered] = SingleFlight(max_bytes=DEFAULT_MAX_BYTES,
                                                       size=lambda r: r.nbytes)


def configure(max_bytes: int) -> None:
    """Bound the cache at max_bytes (0 keeps nothing: every request renders)."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        raise ValueError(f"max_bytes must be an int >= 0, got {max_bytes!r}")
    RENDERS.max_bytes = max_bytes
    RENDERS.clear()


def key(fig: FigureSpec, params: Mapping[str, object], present: bool) -> tuple:
    return (fig, bool(present), *(params[p] for p in fig.params))


def render_now(fig: FigureSpec, params: Mapping[str, object], present: bool) -> Rendered:
    """Render once, uncached: fig.fn on validated params, under presentation mode or not
    (waits for one of the RENDER_SLOTS)."""
    with _slots, presenting(present):
        result = fig.fn(**params)
        png = render_png(result.figure)
    return Rendered(plot="data:image/png;base64," + base64.b64encode(png).decode("ascii"),
                    alt=alt_text(fig.title, result.metrics), table=to_markdown(result.metrics))


def rendered(fig: FigureSpec, tab: TabSpec, values: Mapping[str, object] | None = None,
             present: bool = False) -> Rendered:
    params = validated(fig.params, tab, values)
    return RENDERS.get(key(fig, params, present), lambda: render_now(fig, params, present))


def stats() -> FlightStats:
    return RENDERS.stats()
