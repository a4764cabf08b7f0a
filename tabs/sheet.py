"""The contact sheet: `python app.py --export DIR --sheet` also writes every figure as SVG (for
slides; the browser scales it) and DIR/index.html: each tab's lesson and figures in registry
order. Where a figure differs from its reviewed baseline (tests/figures/baseline), the sheet
shows expected, actual and the difference side by side, so a baseline change is reviewed by
eye before it is committed."""

from __future__ import annotations

import html
import io
import shutil
from pathlib import Path

from markdown_it import MarkdownIt
from matplotlib.figure import Figure
from matplotlib.testing.compare import compare_images

from tabs.figure import DRAW_LOCK
from tabs.spec import FigureSpec, TabSpec

BASELINE = Path(__file__).resolve().parent.parent / "tests" / "figures" / "baseline"
RMS_TOLERANCE = 2.0  # the visual-regression test's tolerance


def render_svg(fig: Figure) -> bytes:
    with DRAW_LOCK, io.BytesIO() as buf:
        fig.savefig(buf, format="svg")
        return buf.getvalue()


def _diff(out: Path, name: str) -> str:
    """HTML for expected / actual / diff when the PNG differs from its baseline, else ''."""
    expected = BASELINE / f"{name}.png"
    if not expected.exists():
        return "<p class='diff'>No baseline for this figure yet.</p>"
    ref = out / f"{name}-expected.png"
    shutil.copy(expected, ref)
    result = compare_images(str(ref), str(out / f"{name}.png"), tol=RMS_TOLERANCE)
    if result is None:
        ref.unlink()
        return ""
    diff = out / f"{name}-failed-diff.png"
    cells = "".join(f"<figure><img src='{p.name}'><figcaption>{c}</figcaption></figure>"
                    for p, c in ((ref, "expected (baseline)"), (out / f"{name}.png", "actual"),
                                 (diff, "difference")) if p.exists())
    return f"<div class='diff'><p>Differs from its baseline:</p>{cells}</div>"


def write_sheet(out: Path, tabs: list[tuple[TabSpec, list[FigureSpec]]]) -> Path:
    """index.html over figures already exported to out (PNG, SVG); returns its path."""
    from tabs.glossary import link_terms

    md = MarkdownIt("commonmark", {"html": True})
    parts = ["<!doctype html><meta charset='utf-8'><title>Serving Lab: contact sheet</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
             "section{border-top:2px solid #ccc;margin-top:2em}img{max-width:100%}"
             ".diff{display:flex;gap:8px;background:#fff3f3}.diff figure{flex:1;margin:0}"
             ".diff img{width:100%}</style>",
             "<h1>Serving Lab: every tab's lesson and default figures</h1><nav>",
             " · ".join(f"<a href='#{t.id}'>{html.escape(t.title)}</a>" for t, _ in tabs),
             "</nav>"]
    for tab, figs in tabs:
        parts.append(f"<section id='{tab.id}'><h2>{html.escape(tab.title)}</h2>")
        parts.append(md.render(link_terms(tab.lesson())))
        for fig in figs:
            parts.append(f"<h3>{html.escape(fig.title)}</h3><a href='{fig.name}.svg'>"
                         f"<img src='{fig.name}.png' alt='{html.escape(fig.title)}'></a>")
            parts.append(_diff(out, fig.name))
        parts.append("</section>")
    index = out / "index.html"
    index.write_text("\n".join(parts), encoding="utf-8")
    return index
