"""Presentation mode arranges a figure by data, not by branches (tabs/projector.py): a figure
that needs another arrangement on a projector declares both records as an Arrangement on its
draw function (arranged_by), read through FigureSpec.arrangement, and draws with the current
mode's record. What is checked here:
- the decorated function draws with the normal record, and with the projector's under
  presenting(), in the caller's context (a ContextVar: another thread's mode never leaks in);
- every declared arrangement is two records of one kind that differ in every field (a value
  the same in both modes is a constant, not an arrangement), and is reachable from the
  registry (no module-level Arrangement that no FigureSpec declares);
- figure modules never ask the mode (is_presenting(), or the inline arranged() this replaced):
  what a projector draws differently is a field of their arrangement.
"""

from __future__ import annotations

import ast
import dataclasses
import threading
from pathlib import Path

import pytest

from tabs.figure import Arrangement, arranged_by, presenting
from tabs.registry import all_figures

TABS = Path(__file__).resolve().parents[2] / "tabs"
FRAMEWORK = {"figure.py", "projector.py"}  # where the mode is read by design
MODE_NAMES = {"is_presenting", "arranged"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Toy:
    top: float
    cols: int


_TOY = Arrangement(normal=_Toy(top=1.0, cols=3), projector=_Toy(top=2.0, cols=2))


@arranged_by(_TOY)
def _draw(x: int, *, lay: _Toy) -> tuple[int, _Toy]:
    return x, lay


def test_arranged_by_draws_with_the_current_modes_record():
    assert _draw(5) == (5, _TOY.normal)
    with presenting():
        assert _draw(x=6) == (6, _TOY.projector)
        with presenting(False):
            assert _draw(7)[1] is _TOY.normal
    assert _draw.arrangement is _TOY


def test_another_threads_mode_does_not_reach_a_draw():
    seen = []
    with presenting():
        worker = threading.Thread(target=lambda: seen.append(_draw(1)[1]))
        worker.start()
        worker.join()
    assert seen == [_TOY.normal]


def test_an_arrangement_is_two_records_of_one_kind():
    with pytest.raises(TypeError, match="one kind"):
        Arrangement(normal=_Toy(top=1.0, cols=3), projector=(2.0, 2))


def _declared() -> dict[int, tuple[Arrangement, list[str]]]:
    out: dict[int, tuple[Arrangement, list[str]]] = {}
    for _, fig in all_figures():
        if (a := fig.arrangement) is not None:
            out.setdefault(id(a), (a, []))[1].append(fig.name)
    return out


def _differences(a: Arrangement) -> list[str]:
    """The fields (or, for a plain container, the record) the same in both modes."""
    if dataclasses.is_dataclass(a.normal):
        return [f.name for f in dataclasses.fields(a.normal)
                if getattr(a.normal, f.name) == getattr(a.projector, f.name)]
    return [] if a.normal != a.projector else ["the record"]


def test_every_declared_arrangement_differs_in_every_field():
    declared = _declared()
    assert declared, "no figure declares an arrangement"
    same = {" ".join(names): s for a, names in declared.values() if (s := _differences(a))}
    assert not same, f"the same in both modes (make them constants): {same}"


def test_the_difference_check_catches_a_constant():
    assert _differences(Arrangement(normal=_Toy(top=1.0, cols=3),
                                    projector=_Toy(top=2.0, cols=3))) == ["cols"]


def test_every_arrangement_in_a_figure_module_is_declared_by_a_figure():
    import importlib

    declared = {id(a) for a, _ in _declared().values()}
    modules = {fig.fn.module if hasattr(fig.fn, "module") else fig.fn.__module__
               for _, fig in all_figures()}
    stray = [f"{m}.{name}" for m in sorted(modules)
             for name, v in vars(importlib.import_module(m)).items()
             if isinstance(v, Arrangement) and id(v) not in declared]
    assert not stray, f"arrangements no FigureSpec reads (decorate the draw with arranged_by): " \
                      f"{stray}"


def _mode_reads(source: str) -> int:
    """Calls of is_presenting() or arranged() (the inline choice this replaced) in `source`."""
    n = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
                else None
            n += name in MODE_NAMES
    return n


def test_figure_modules_never_read_the_mode():
    reads = {str(p.relative_to(TABS)): n for p in sorted(TABS.rglob("*.py"))
             if p.name not in FRAMEWORK and (n := _mode_reads(p.read_text(encoding="utf-8")))}
    assert reads == {}, reads


def test_the_mode_read_count_sees_both_forms():
    assert _mode_reads("if is_presenting():\n    x = arranged(1, 2)\ny = f.is_presenting()") == 3
