"""Named tolerances: every oracle comparison in the suite goes through assert_close."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.tolerances import FP32_DECODE_MAX_ABS, FP32_ORACLE_MAX_REL, FP64_CHUNKED_MAX_ABS


@dataclass(frozen=True, slots=True)
class Tolerance:
    """max_abs: pass if max|ref - x| <= max_abs; else require max|ref - x| / max|ref| <= max_rel."""

    name: str
    max_abs: float = 0.0
    max_rel: float = 0.0


EXACT = Tolerance("exact (bit for bit)")
FP64_CHUNKED = Tolerance("float64 chunked vs recurrent", max_abs=FP64_CHUNKED_MAX_ABS)
FP32_ORACLE = Tolerance("float32 vs fla naive", max_abs=0.0, max_rel=FP32_ORACLE_MAX_REL)
FP32_DECODE = Tolerance("float32 prefill vs decode", max_abs=FP32_DECODE_MAX_ABS)
# float32 sums of O(1) values whose order depends on the CPU's kernels (a result computed on one
# machine, recomputed on another): 1.2171960717 vs 1.2171960481 measured.
FP32_REORDERED = Tolerance("float32 sums in another CPU's order", max_abs=1e-6)


def _as_f64(x: torch.Tensor | np.ndarray) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().to(torch.float64).cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def errors(ref: torch.Tensor | np.ndarray, x: torch.Tensor | np.ndarray) -> tuple[float, float]:
    """(max abs error, max abs error / max |ref|)."""
    r, v = _as_f64(ref), _as_f64(x)
    assert r.shape == v.shape, f"shape mismatch {r.shape} vs {v.shape}"
    if r.size == 0:
        return 0.0, 0.0
    abs_err = float(np.max(np.abs(r - v)))
    scale = float(np.max(np.abs(r)))
    return abs_err, abs_err / scale if scale > 0 else abs_err


def assert_close(ref, x, tol: Tolerance, what: str = "") -> None:
    """Fail with both error figures and the tolerance's name."""
    if tol == EXACT:
        r, v = _as_f64(ref), _as_f64(x)
        assert r.shape == v.shape and np.array_equal(r, v), (
            f"{what}: not bit-identical ({tol.name})"
        )
        return
    abs_err, rel_err = errors(ref, x)
    ok = abs_err <= tol.max_abs or (tol.max_rel > 0 and rel_err <= tol.max_rel)
    assert ok, f"{what}: max abs {abs_err:.3e}, max rel {rel_err:.3e} exceed {tol}"
