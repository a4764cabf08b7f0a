"""REGISTRY: the one ordered list of tabs that the app, the export CLI and the tests iterate."""

from __future__ import annotations

from tabs.spec import FigureSpec, TabSpec

REGISTRY: tuple[TabSpec, ...] = ()


def all_figures() -> list[tuple[TabSpec, FigureSpec]]:
    return [(tab, fig) for tab in REGISTRY for fig in tab.figures]


def find_figure(name: str) -> tuple[TabSpec, FigureSpec]:
    for tab, fig in all_figures():
        if fig.name == name:
            return tab, fig
    raise KeyError(f"no figure named {name!r}")
