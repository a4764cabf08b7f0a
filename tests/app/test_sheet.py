"""The export contact sheet: SVGs beside the PNGs, index.html with each lesson and figure, and
expected / actual / diff shown exactly where a figure differs from its baseline."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.image import imread, imsave

import tabs.sheet as sheet
from app import export
from tabs.registry import REGISTRY

pytestmark = __import__("pytest").mark.app


def test_sheet_lists_lessons_figures_and_flags_only_changed_ones(tmp_path: Path, monkeypatch):
    tab = REGISTRY[1]
    base = tmp_path / "baseline"
    base.mkdir()
    for f in tab.figures:  # copy the real baselines, then spoil one
        (base / f"{f.name}.png").write_bytes((sheet.BASELINE / f"{f.name}.png").read_bytes())
    spoiled = tab.figures[0].name
    img = imread(base / f"{spoiled}.png")
    imsave(base / f"{spoiled}.png", np.clip(1 - img[..., :3], 0, 1))
    monkeypatch.setattr(sheet, "BASELINE", base)
    out = tmp_path / "out"
    written = export(out, only=tab.id, sheet=True)
    assert {p.suffix for p in written} == {".png", ".json", ".svg", ".html"}
    index = (out / "index.html").read_text()
    assert tab.title in index and "class=\"term\"" in index  # lesson with glossary terms
    for f in tab.figures:
        assert (out / f"{f.name}.svg").read_bytes().lstrip().startswith(b"<?xml")
        assert f"src='{f.name}.png'" in index
    assert f"{spoiled}-expected.png" in index and f"{spoiled}-failed-diff.png" in index
    others = [f.name for f in tab.figures if f.name != spoiled]
    assert not any(f"{n}-expected.png" in index for n in others)
