"""Kernels: the model's arithmetic, batch-invariant (the default) or torch's fastest.

A serving engine runs many requests in one forward; a request's output must not depend on
what else is in its batch. On this CPU three things tie a token's bits to its batch:
  rows   a matmul's row bits change with the number of rows in the call (this MKL build:
         1, 2-3 and >= 4 rows take different kernels, and with 2 threads a 5-row product is
         split 4 + 1, so its last row takes the 1-row kernel);
  lanes  sigmoid, silu and rsqrt give different bits in the vector body of torch's
         elementwise loop and in its scalar tail, so an element's bits depend on where in the
         tensor it falls;
  order  a token's experts summed in the batch's visit order, attention over a key row whose
         padded length depends on the batch.
INVARIANT removes each one:
  linear, bmm    rows padded with zeros to a multiple of m: the smallest m in ROW_MULTIPLES for
                 which a self-test finds every row equal to that row alone (padded the same
                 way); calibrated once per op, shape and thread count (`row_multiple`). If none
                 passes, every row runs as its own 1-row product (a bmm of 1-row slices).
  sigmoid, silu  1 / (1 + exp(-x)) and x / (1 + exp(-x)): exp gives the same bits in both
                 paths (self-tested with the rows, `exp_lanes_agree`), and +, /, * and sqrt are
                 correctly rounded, so position cannot matter.
  rms            x / sqrt(mean(x^2) + eps) instead of x * rsqrt(...).
The model's layers add the rest (core/model/layers.py, moe.py): an explicit short conv,
attention over key rows padded to the query's own 64-token block, experts summed in each
token's top-k order.
FAST is torch's own ops: the fastest, and a token's bits may depend on its batch.
Oracle: tests/core/model/test_kernels.py (rows of every M against the row alone) and the
engine's batch invariance (tests/core/serve/test_batching.py).
"""

from __future__ import annotations

import functools
import threading
import warnings
from dataclasses import dataclass

import torch
import torch.nn.functional as F

ROW_MULTIPLES = (4, 8, 16, 32, 64)
_rows: dict[tuple[str, int, int, int], int] = {}
_lock = threading.Lock()


def _layout(b: torch.Tensor) -> str:
    """'t' when b [..., K, N] is a transposed view of a row-major [..., N, K] (F.linear's)."""
    return "t" if b.stride(-2) == 1 and b.shape[-2] > 1 else "n"


def _product(op: str, a: torch.Tensor, b: torch.Tensor, m: int) -> torch.Tensor:
    """a's rows padded to a multiple of m, then the product, then the padding dropped.

    op "linear": a [M, K], b [N, K] (F.linear); "bmm": a [E, M, K], b [E, K, N] (torch.bmm).
    m = 1: every row alone, as a bmm of 1-row slices."""
    if m == 1:
        a3, b3 = (a.unsqueeze(0), b.t().unsqueeze(0)) if op == "linear" else (a, b)
        E, M, K = a3.shape
        bs = b3.unsqueeze(1).expand(E, M, K, b3.shape[-1]).reshape(E * M, K, b3.shape[-1])
        y = torch.bmm(a3.reshape(E * M, 1, K), bs).view(E, M, -1)
        return y[0] if op == "linear" else y
    M = a.shape[-2]
    r = m - M % m if M % m else 0
    a = F.pad(a, (0, 0, 0, r)) if r else a.contiguous()  # the layout calibrated: row-major
    y = F.linear(a, b) if op == "linear" else torch.bmm(a, b)
    return y[..., :M, :] if r else y


def _rows_agree(op: str, k: int, n: int, layout: str, m: int) -> bool:
    """Every sampled row of every sampled M equals that row alone (both padded to m)."""
    gen = torch.Generator().manual_seed(k * 7919 + n)
    if op == "linear":
        w = torch.randn(n, k, generator=gen)
        sizes = [(1, M) for M in (1, 2, 3, 5, m - 1, m + 1, 2 * m - 1, 3 * m + 1, 7 * m + 3,
                                  64 * m + 5) if M >= 1]
    else:
        w = torch.randn(16, n, k, generator=gen).transpose(1, 2) if layout == "t" else \
            torch.randn(16, k, n, generator=gen)
        sizes = [(E, M) for E in (1, 3, 16) for M in (1, 3, m + 1, 5 * m + 3) if M >= 1]
    x = torch.randn(16, max(M for _, M in sizes), k, generator=gen)
    for E, M in sizes:
        rows = list(_sample(M))
        if op == "linear":
            want = _product(op, x[0, :M], w, m)[rows]
            alone = [_product(op, x[0, i : i + 1], w, m)[0] for i in rows]
        else:
            want = _product(op, x[:E, :M], w[:E], m)[:, rows].reshape(-1, n)
            alone = [_product(op, x[e : e + 1, i : i + 1], w[e : e + 1], m)[0, 0]
                     for e in range(E) for i in rows]
        if not torch.equal(torch.stack(alone), want):
            return False
    return True


def _sample(M: int) -> tuple[int, ...]:
    return tuple(sorted({0, M // 2, M - 1, min(M - 1, 4), min(M - 1, 9)}))


def row_multiple(op: str, k: int, n: int, layout: str = "n") -> int:
    """The row padding that makes op's row bits independent of M (1: one product per row);
    measured once per op, shape, operand layout and thread count."""
    key = (op + layout, k, n, torch.get_num_threads())
    m = _rows.get(key)
    if m is None:
        m = next((c for c in ROW_MULTIPLES if _rows_agree(op, k, n, layout, c)), 1)
        with _lock:
            _rows[key] = m
    return m


@functools.cache
def exp_lanes_agree() -> bool:
    """exp gives the same bits for an element alone as inside a long vectorised call (checked
    once per process; the invariant sigmoid and silu rest on it, and warn if it fails)."""
    x = torch.linspace(-30.0, 30.0, 4099)
    alone = torch.cat([torch.exp(x[i : i + 1]) for i in range(0, 4099, 97)])
    ok = torch.equal(alone, torch.exp(x)[::97])
    if not ok:
        warnings.warn("torch.exp gives an element other bits inside a vectorised call than "
                      "alone on this CPU: the invariant sigmoid and silu are not batch-invariant "
                      "here", RuntimeWarning, stacklevel=2)
    return ok


@dataclass(frozen=True, slots=True)
class Kernels:
    """The model's arithmetic; every layer takes one of INVARIANT or FAST."""

    invariant: bool

    @property
    def name(self) -> str:
        return "invariant" if self.invariant else "fast"

    def linear(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """F.linear without bias: x [..., K], w [N, K] -> [..., N]."""
        if not self.invariant:
            return F.linear(x, w)
        K, N = x.shape[-1], w.shape[0]
        m = _rows.get(("linearn", K, N, torch.get_num_threads())) or row_multiple("linear", K, N)
        y = _product("linear", x.reshape(-1, K), w, m)  # [M, N]
        return y if x.dim() == 2 else y.view(*x.shape[:-1], N)

    def bmm_rows(self, k: int, n: int) -> int:
        """The row multiple bmm pads an [E, M, k] @ [E, k, n] (row-major b) to: a caller that
        builds its M as a multiple of it saves the padding copy (1 with FAST)."""
        if not self.invariant:
            return 1
        return _rows.get(("bmmn", k, n, torch.get_num_threads())) or row_multiple("bmm", k, n)

    def bmm(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """a [E, M, K] @ b [E, K, N] -> [E, M, N]; b row-major or a transposed [E, N, K]."""
        if not self.invariant:
            return torch.bmm(a, b)
        lay = _layout(b)
        K, N = a.shape[-1], b.shape[-1]
        m = _rows.get(("bmm" + lay, K, N, torch.get_num_threads())) or \
            row_multiple("bmm", K, N, lay)
        return _product("bmm", a, b, m)

    def sigmoid(self, x: torch.Tensor) -> torch.Tensor:
        if not self.invariant:
            return torch.sigmoid(x)
        exp_lanes_agree()
        e = torch.exp(torch.neg(x))
        if e.requires_grad:
            return torch.reciprocal(e + _ONE)
        return e.add_(_ONE).reciprocal_()  # NOTE: a 0-dim tensor adds faster than a float

    def silu(self, x: torch.Tensor) -> torch.Tensor:
        if not self.invariant:
            return F.silu(x)
        e = torch.exp(torch.neg(x))
        return x / (e + _ONE if e.requires_grad else e.add_(_ONE))

    def rms(self, x: torch.Tensor, weight: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        """RMSNorm over the last dim; eps a 0-dim tensor."""
        ms = x.pow(2).mean(-1, keepdim=True) + eps
        if not self.invariant:
            return x * torch.rsqrt(ms) * weight
        return x / torch.sqrt(ms) * weight


_ONE = torch.ones(())
INVARIANT = Kernels(True)
FAST = Kernels(False)
KERNELS = {"invariant": INVARIANT, "fast": FAST}


def _kept(module: torch.nn.Module, name: str, ws: tuple[torch.Tensor, ...], build
          ) -> torch.Tensor | tuple[torch.Tensor, ...]:
    """build(ws), kept on the module while the same tensors (identity, so an address cannot be
    reused) are at the same versions; rebuilt every call under autograd."""
    if torch.is_grad_enabled() and any(w.requires_grad for w in ws):
        return build(ws)
    cache = module.__dict__.setdefault("_kept", {})
    hit = cache.get(name)
    versions = tuple(w._version for w in ws)
    if hit is None or len(hit[0]) != len(ws) or hit[1] != versions \
            or any(a is not b for a, b in zip(hit[0], ws, strict=True)):
        hit = (ws, versions, build(tuple(w.detach() for w in ws)))
        cache[name] = hit
    return hit[2]


def fused(module: torch.nn.Module, *linears: torch.nn.Linear) -> torch.Tensor:
    """The weights of linears that read the same input, stacked [sum N, K]: one product
    instead of several (kept on the module while no weight changes)."""
    ws = tuple(lin.weight for lin in linears)
    return _kept(module, "fused:" + ",".join(str(id(lin)) for lin in linears), ws, torch.cat)


def transposed(module: torch.nn.Module, stacks: tuple[torch.Tensor, ...]
               ) -> tuple[torch.Tensor, ...]:
    """Expert stacks [E, I, D], [E, D, I], [E, I, D] transposed row-major ([E, D, I], ...),
    kept on the module while they stay the same."""
    return _kept(module, "transposed", tuple(stacks),
                 lambda ws: tuple(w.transpose(1, 2).contiguous() for w in ws))
