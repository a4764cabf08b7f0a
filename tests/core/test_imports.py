"""Import hygiene of core/, read from the source and checked in a fresh interpreter.

1. No two core modules import each other. Every import statement counts: top level, inside a
   function, under `if TYPE_CHECKING:`. A shared piece belongs to the module that owns it,
   which both import; a cycle hidden in a function or a type-only import is still a cycle.
   `from core.a import b` is an import of core.a.b when that is a module, else of core.a.
2. Importing every core module leaves gradio and matplotlib unimported: core is the engine,
   tabs/ draw (the layers of ../shared/DESIGN.md).
3. No module of core/ or tabs/ imports another module's private name (`from x import _y`):
   what another module needs is public, or stays inside its own module.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def modules(root: Path, package: str) -> dict[str, Path]:
    """Dotted name -> file of every module of the package at root/package (a package is its
    __init__.py)."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The known modules that the module `name` imports anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
    return {m for m in found if m in known and m != name}


def mutual_pairs(root: Path, package: str) -> list[tuple[str, str]]:
    """Every pair (a, b), a < b, of modules of the package that import each other."""
    known = modules(root, package)
    graph = {name: imports_of(name, path, known) for name, path in known.items()}
    return sorted((a, b) for a in graph for b in graph[a] if a < b and a in graph[b])


def test_no_two_core_modules_import_each_other() -> None:
    pairs = mutual_pairs(REPO, "core")
    assert not pairs, "core modules that import each other: " + ", ".join(
        f"{a} <-> {b}" for a, b in pairs)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_walk_finds_function_level_type_only_and_relative_imports(tmp_path: Path) -> None:
    """The detector itself: each hidden form of a cycle is found, a one-way import is not."""
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "def f():\n    from pkg.b import g\n",
        "pkg/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n",
        "pkg/sub/__init__.py": "from . import c\n",
        "pkg/sub/c.py": "from .. import sub\n",
        "pkg/sub/d.py": "import pkg.a\n",
    })
    assert mutual_pairs(tmp_path, "pkg") == [("pkg.a", "pkg.b"), ("pkg.sub", "pkg.sub.c")]


def private_imports(root: Path, package: str) -> list[str]:
    """'module: name from source' for every `from source import _name` in the package whose
    source is another module (dunders such as __version__ are public)."""
    out = []
    for name, path in modules(root, package).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                out += [f"{name}: {a.name} from {'.' * node.level}{node.module or ''}"
                        for a in node.names
                        if a.name.startswith("_") and not a.name.endswith("__")]
    return out


def test_no_module_imports_another_modules_private_name() -> None:
    found = [hit for pkg in ("core", "tabs") for hit in private_imports(REPO, pkg)]
    assert not found, "private names imported across modules: " + "; ".join(found)


def test_the_private_import_walk_finds_a_private_name(tmp_path: Path) -> None:
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "_x = 1\n__all__ = []\n",
                      "pkg/b.py": "def f():\n    from pkg.a import _x, __all__\n"})
    assert private_imports(tmp_path, "pkg") == ["pkg.b: _x from pkg.a"]


def test_core_imports_neither_gradio_nor_matplotlib() -> None:
    """Every core module imported in a fresh interpreter; then neither library is loaded."""
    names = sorted(n for n in modules(REPO, "core") if not n.endswith("__main__"))
    probe = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in ('gradio', 'matplotlib') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
    assert len(names) > 100  # the walk saw the whole package
