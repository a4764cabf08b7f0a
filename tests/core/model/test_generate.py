"""Greedy generation is a pure function of the weights and the prompt: the same bytes in this
process, twice, and in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = (
    "import torch; torch.set_num_threads(2)\n"
    "from core.model.weights import load_model\n"
    "print(load_model().generate(b'12 + 30 = ', 24).hex())\n"
)


def test_greedy_deterministic_across_processes(shipped) -> None:
    """Two runs here and one in a subprocess give identical bytes."""
    a = shipped.generate(b"12 + 30 = ", 24)
    assert a == shipped.generate(b"12 + 30 = ", 24)
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True)
    assert bytes.fromhex(out.stdout.strip()) == a


def test_arithmetic_continuation(shipped) -> None:
    """The trained model continues an arithmetic line with digits and a newline."""
    out = shipped.generate(b"40 + 2 = ", 3)
    assert out[:1].isdigit()
