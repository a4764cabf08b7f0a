"""The independent oracle: flash-linear-attention's naive KDA, loaded by file path.

`import fla.ops.kda.naive` would run `fla/ops/__init__.py`, which imports the Triton kernels;
Triton is not a base dependency of the `fla-core` wheel and there is no GPU here. `naive.py`
itself needs only torch and einops, so it is executed on its own from the installed wheel.
Its functions cast inputs to float32 and return (o, S), S only with output_final_state=True.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

FLA_DISTRIBUTION = "fla-core"
NAIVE_PATH = "fla/ops/kda/naive.py"


def fla_naive_path() -> Path | None:
    """Path of fla/ops/kda/naive.py in the installed fla-core wheel, or None."""
    try:
        located = importlib.metadata.distribution(FLA_DISTRIBUTION).locate_file(NAIVE_PATH)
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(str(located))
    return path if path.is_file() else None


@cache
def load_fla_kda_naive() -> ModuleType | None:
    """The module with naive_recurrent_kda and naive_chunk_kda, or None when unavailable."""
    path = fla_naive_path()
    if path is None:
        return None
    spec = importlib.util.spec_from_file_location("serving_lab_fla_kda_naive", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError:
        return None
    if not hasattr(module, "naive_recurrent_kda") or not hasattr(module, "naive_chunk_kda"):
        return None
    return module


def fla_version() -> str | None:
    """The installed fla-core version (pinned in requirements-dev.txt), or None."""
    try:
        return importlib.metadata.version(FLA_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
