"""Claims of assets/lessons/replay_ring.md, each computed from core.speculative, checked by its
reason.

Sessions run at the tab's own defaults (tabs.replay_ring.TAB); ledgers are re-derived from the
per-layer bytes by hand; the gate bound is checked against torch's fp32 exp.
"""

from __future__ import annotations

import functools
import itertools
import math

import torch

from core.dims import K3
from core.kda import kda_recurrent
from core.kda.chunked import SUB_CHUNK
from core.model.config import ModelDims
from core.speculative import window
from core.speculative.bounds import (
    GATE_EXPONENT_LIMIT,
    K3_GATE_LOWER_BOUND,
    max_ring_for_gate,
    needs_flush,
    ring_schedule,
)
from core.speculative.session import SessionParams, accepted_draws, run_session
from core.tolerances import max_abs
from tabs.replay_ring import TAB
from tests.lessons.registry import claim

LESSON = "replay_ring"


@functools.cache
def params(dtype: str = "float64", **override: object) -> SessionParams:
    d = {k: v for k, v in TAB.defaults().items() if k not in ("dtype", "step")}
    return SessionParams(**{**d, "dtype": dtype, **override})


@functools.cache
def session(dtype: str = "float64"):
    return run_session(params(dtype))


def _overruns(rule, capacity: int, draft_len: int, draws) -> bool:
    """Would a window ever be pushed past the ring's end under `rule`?"""
    c = 0
    for n in draws:
        if rule(c):
            c = 0
        if c + draft_len + 1 > capacity:
            return True
        c += n + 1
    return False


@claim(LESSON, "(committed + γ + {bonus} > L)")
def flush_rule() -> dict[str, object]:
    """The rule leaves room for the whole window; the rule without the bonus token does not."""
    g = 3
    for L in range(g + 1, 33):
        for c in range(L + 1):
            assert needs_flush(c, g, L) == (c + g + 1 > L)
    draws = [g, g, 0] * 10
    assert not _overruns(lambda c: needs_flush(c, g, 12), 12, g, draws)
    assert _overruns(lambda c: c + g > 12, 12, g, draws)
    return {"bonus": window(g) - g}


@claim(LESSON, "a window of γ + {bonus} entries")
def window_entries() -> dict[str, object]:
    s = session()
    pushes = {r.snap_pushes - s.params.draft_len for r in s.steps}
    assert len(pushes) == 1 and s.layout.num_tentative == s.params.draft_len + 1
    return {"bonus": pushes.pop()}


@claim(LESSON, "A step that rejects every draft still commits one token")
def progress_without_accepts() -> dict[str, object]:
    s = run_session(params(accept_rate=0.0))
    assert all(r.n_accepted == 0 and r.n_committed == 1 for r in s.steps)
    assert s.num_committed == len(s.steps)
    return {}


def _totals(s) -> dict[str, int]:
    fields = ("raw_written", "raw_read", "snap_written", "snap_read")
    return {f: sum(getattr(r.k3, f) for r in s.steps) for f in fields}


@claim(LESSON, "At the defaults a ring of snapshots writes {w:.1f}× and reads {r:.1f}× the bytes "
               "the raw-input ring does")
def bandwidth_at_defaults() -> dict[str, object]:
    """Totals re-derived by hand from one K3 layer's bytes x 69 layers."""
    s, u = session(), session().k3_units
    w = s.params.draft_len + 1
    want = {"raw_written": 0, "raw_read": 0, "snap_written": 0, "snap_read": 0}
    for r in s.steps:
        c = r.flushed or r.committed_before  # entries folded by the flush, or replayed
        want["raw_written"] += w * (u.raw + u.conv_row) + (u.state if r.flushed else 0)
        want["raw_read"] += c * u.raw
        restore = u.state if r.n_accepted < s.params.draft_len else 0
        want["snap_written"] += w * (u.state + u.conv_row) + restore
        want["snap_read"] += restore
    got = _totals(s)
    assert got == {k: v * K3.n_kda for k, v in want.items()}
    w_ratio, r_ratio = got["snap_written"] / got["raw_written"], got["snap_read"] / got["raw_read"]
    assert w_ratio > 1
    return {"w": w_ratio, "r": r_ratio}


@claim(LESSON, "exponentiates gates summed over L − {one} steps: with [[K3]]'s gate floor of "
               "{lb} that stays inside fp32 only up to L = {L}")
def gate_range() -> dict[str, object]:
    L, lb = max_ring_for_gate(), K3_GATE_LOWER_BOUND
    assert ModelDims().gate_lower_bound == lb  # the model uses K3's lower-bound gate
    assert (L - 1) * -lb <= GATE_EXPONENT_LIMIT < L * -lb
    f32 = torch.float32
    assert torch.isfinite(torch.exp(torch.tensor((L - 1) * -lb, dtype=f32)))
    return {"one": 1, "lb": f"−{-lb:g}", "L": L}


@claim(LESSON, "max|Δ| = {d:g} in float64 and in float32")
def equivalence_exact() -> dict[str, object]:
    """The streamed outputs and final state, and the snapshot restored at every step, against
    one kda_recurrent over the committed tokens (to each step's end), compared here."""
    worst = 0.0
    for dtype in ("float64", "float32"):
        s = session(dtype)
        c = s.committed
        o_ref, s_ref = kda_recurrent(c.q, c.k, c.v, c.g, c.beta, initial_state=s.initial_state)
        assert torch.equal(s.outputs, o_ref) and torch.equal(s.final_state, s_ref)
        ends = itertools.accumulate(r.n_committed for r in s.steps)
        restored = [kda_recurrent(c.q[:, :t], c.k[:, :t], c.v[:, :t], c.g[:, :t],
                                  c.beta[:, :t], initial_state=s.initial_state)[1] for t in ends]
        assert len(s.snap_restored) == len(s.steps)
        assert all(torch.equal(a, b) for a, b in zip(s.snap_restored, restored, strict=True))
        worst = max(worst, max_abs(s.outputs, o_ref), max_abs(s.final_state, s_ref))
    return {"d": worst}


@claim(LESSON, "(L = {L}, γ = {g}, a = {a}, {steps} steps): {tokens} tokens committed, "
               "{flushes} flushes")
def defaults_summary() -> dict[str, object]:
    s, p = session(), params()
    assert s.num_committed == sum(r.n_accepted + 1 for r in s.steps)
    sched = ring_schedule(p.capacity, p.draft_len, accepted_draws(p))
    assert sched.tokens == s.num_committed
    return {"L": p.capacity, "g": p.draft_len, "a": p.accept_rate, "steps": p.steps,
            "tokens": s.num_committed, "flushes": sum(1 for r in s.steps if r.flushed)}


@claim(LESSON, "At L = {L} the ring replays {x:.2f} entries per committed token; at L = {small} "
               "it folds each entry once, in a flush before every step after the first")
def sweep() -> dict[str, object]:
    p = params()
    draws = accepted_draws(p)
    at = ring_schedule(p.capacity, p.draft_len, draws)
    small = p.draft_len + 1
    tiny = ring_schedule(small, p.draft_len, draws)
    assert [bool(f) for f in tiny.flushed] == [False] + [True] * (p.steps - 1)
    assert sum(tiny.committed_before) == 0  # nothing left to replay between flushes
    assert sum(tiny.replayed) == tiny.tokens - (draws[-1] + 1)  # all but the last window
    assert at.replayed_per_token > tiny.replayed_per_token
    return {"L": p.capacity, "x": at.replayed_per_token, "small": small}


@claim(LESSON, "history + {b} + num_spec > L (#49847); the {b} is the bonus token")
def vllm_rule() -> dict[str, object]:
    s = session()
    for r in s.steps:  # history + 1 + num_spec entries always fit after the flush
        assert r.committed_before + 1 + s.params.draft_len <= s.params.capacity
    return {"b": window(s.params.draft_len) - s.params.draft_len}


@claim(LESSON, "fp32 exp overflows just above {ln:.1f}; the bound (L − {one})·|lb| ≤ {lim:g}")
def fp32_range() -> dict[str, object]:
    f32 = torch.float32
    ln = math.log(torch.finfo(f32).max)
    assert torch.isfinite(torch.exp(torch.tensor(ln - 0.01, dtype=f32)))
    assert torch.isinf(torch.exp(torch.tensor(ln + 0.01, dtype=f32)))
    assert GATE_EXPONENT_LIMIT < ln
    return {"ln": ln, "one": 1, "lim": GATE_EXPONENT_LIMIT}


@claim(LESSON, "anchors sub-chunks of {s} tokens for the same reason: ({s} − {one}) × {lb:g} = "
               "{p:g} stays inside it")
def chunked_anchor() -> dict[str, object]:
    p = (SUB_CHUNK - 1) * -K3_GATE_LOWER_BOUND
    assert p <= GATE_EXPONENT_LIMIT and SUB_CHUNK <= max_ring_for_gate()
    return {"s": SUB_CHUNK, "one": 1, "lb": -K3_GATE_LOWER_BOUND, "p": p}


@claim(LESSON, "The step slider replays the timeline one verify step at a time.")
def step_slider() -> dict[str, object]:
    """The step slider follows the steps slider; the layout at step k is the ring the run
    recorded after step k's pushes, and its default shows every step."""
    c = TAB.control("step")
    assert c.max_from == "steps" and c.value == TAB.control("steps").value
    assert {f.name for f in TAB.figures if "step" in f.params} == {"ring_timeline", "ring_layout"}
    s = session()
    assert len(s.layouts) == len(s.steps) and s.layouts[-1] == s.layout
    assert all(lay.start == r.start for lay, r in zip(s.layouts, s.steps, strict=True))
    return {}
