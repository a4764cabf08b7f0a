"""No record of core/ (a dataclass or NamedTuple) is built from 5 or more positional arguments,
anywhere in core/, tabs/ or tests/: past four fields a reader cannot tell which value is which,
and a reordered field goes unnoticed. Records with that many fields are keyword-only
(`kw_only=True`); this scan also catches a new record built positionally before it is. A
starred argument (`R(*row)`) counts as too many: its length is not in the source, and a row
in field order is what keyword construction is for (e.g. `PrefetchMeters.from_row`)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MAX_POSITIONAL = 4


def _name(node: ast.expr) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)


def records(root: Path) -> set[str]:
    """Names of the classes under root that are dataclasses or NamedTuples."""
    out = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and (
                any(_name(d.func if isinstance(d, ast.Call) else d) == "dataclass"
                    for d in node.decorator_list)
                or any(_name(b) == "NamedTuple" for b in node.bases)):
                out.add(node.name)
    return out


def positional_records(repo: Path, owners: str, callers: tuple[str, ...]) -> list[str]:
    """'path:line Name(n positional)' for every call of an owners' record with too many."""
    names = records(repo / owners)
    found = []
    for folder in callers:
        for path in sorted((repo / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not (isinstance(node, ast.Call) and _name(node.func) in names):
                    continue
                if any(isinstance(a, ast.Starred) for a in node.args):
                    found.append(f"{path.relative_to(repo)}:{node.lineno} "
                                 f"{_name(node.func)}(*starred)")
                elif len(node.args) > MAX_POSITIONAL:
                    found.append(f"{path.relative_to(repo)}:{node.lineno} "
                                 f"{_name(node.func)}({len(node.args)} positional)")
    return found


def loose_records(root: Path) -> list[str]:
    """'path:line Name' for every dataclass under root with more than MAX_POSITIONAL fields
    of which more than one may be passed by position (neither `kw_only=True` nor a
    `_: KW_ONLY` marker after its first field)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for d in node.decorator_list:
                call = d if isinstance(d, ast.Call) else None
                if _name(call.func if call else d) != "dataclass" or (call and any(
                        k.arg == "kw_only" and getattr(k.value, "value", None) is True
                        for k in call.keywords)):
                    continue
                anns = [s for s in node.body if isinstance(s, ast.AnnAssign)
                        and "ClassVar" not in ast.unparse(s.annotation)]
                marker = next((i for i, s in enumerate(anns)
                               if "KW_ONLY" in ast.unparse(s.annotation)), len(anns))
                if len(anns) > MAX_POSITIONAL and marker > 1:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name}")
    return found


def test_every_wide_core_record_is_keyword_only() -> None:
    found = loose_records(REPO / "core")
    assert not found, "make these kw_only=True:\n" + "\n".join(found)


def test_the_record_scan_finds_a_wide_record_that_is_not_keyword_only(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "r.py").write_text(
        "from dataclasses import KW_ONLY, dataclass\n"
        "@dataclass(frozen=True)\nclass Wide:\n" + "".join(f"    {c}: int\n" for c in "abcde")
        + "@dataclass(kw_only=True)\nclass Kw:\n" + "".join(f"    {c}: int\n" for c in "abcde")
        + "@dataclass\nclass One:\n    a: int\n    _: KW_ONLY\n"
        + "".join(f"    {c}: int\n" for c in "bcde"))
    assert loose_records(tmp_path / "lib") == ["lib/r.py:3 Wide"]


def test_no_core_record_is_built_from_five_positional_arguments() -> None:
    found = positional_records(REPO, "core", ("core", "tabs", "tests"))
    assert not found, "pass these by keyword:\n" + "\n".join(found)


def test_the_scan_finds_a_positional_record(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "r.py").write_text(
        "from dataclasses import dataclass\n@dataclass\nclass R:\n    a: int\n"
        "R(1, 2, 3, 4, 5)\nR(1, 2, 3, 4)\nR(a=1, b=2, c=3, d=4, e=5)\nR(*[1, 2])\n")
    assert positional_records(tmp_path, "lib", ("lib",)) == ["lib/r.py:5 R(5 positional)",
                                                             "lib/r.py:8 R(*starred)"]
