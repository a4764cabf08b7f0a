"""The Engine tab's look and ranges, shared by its declaration and its figures (torch-free).
Its engine runs: core.experiments.engine."""

from __future__ import annotations

from core.experiments.scenes import N_NEW
from core.serve.prompts import KINDS

KIND_STYLE = {  # colour, marker: one per prompt kind, on every figure of the tab
    "code": ("#0072B2", "o"),
    "records": ("#E69F00", "s"),
    "prose": ("#CC79A7", "^"),
}
assert set(KIND_STYLE) == set(KINDS)
RANKS = (2, 64)  # context-parallel ranks: the slider's range and the crossover figure's axis
MAX_PASSES = N_NEW  # a pass emits at least one byte: the pass slider's maximum
