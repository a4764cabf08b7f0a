"""Dispatch `python -m core.bench NAME [args]` to core/bench/NAME.py's main(argv)."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def _available() -> list[str]:
    here = Path(__file__).parent
    return sorted(m.name for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_"))


def main(argv: list[str]) -> int:
    names = _available()
    if not argv or argv[0] not in names:
        print(f"usage: python -m core.bench NAME [args]; NAME is one of {names}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"core.bench.{argv[0]}")
    return int(module.main(argv[1:]) or 0)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
